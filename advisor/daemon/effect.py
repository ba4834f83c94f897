"""The estimated effect of the advice: the treated arm against the control arm.

Two figures per arm: energy per completed job (all the arm's attempt energy, wasted included,
over its completed jobs) and mean overhead of completed jobs. The effect is their ratio, treated
over control (below 1: the advice saves), with a percentile bootstrap interval.

What the interval must show: the arms have machines of their own
(plugins/contract/machine_split.py), and the few machines of the control arm are a draw (on a
pool of 138 machines, 14 drawn differently gave random placement an overhead of 0.81 to 1.25
times the other arm's); and jobs come in bursts, so the jobs of one day share their fate (a
batch whose tenth lands in the control arm raises its waits that day and no other). So each
resample draws both with replacement, Owen's pigeonhole (two-way) bootstrap: the days (the same
draw for both arms, so a day that was busy for the whole pool stays paired) and, within each arm,
the machines (each with the jobs whose last attempt ran there; a job that never started is its
own unit). A job weighs the product of its day's and its machine's draw counts. ``RESAMPLES``
times, seeded so a report is reproducible. Jobs stay whole, which keeps the heavy tails of both
figures and the share of never-finishing jobs in the interval. Resampling machines alone gave
intervals that missed the full-pool comparison on the bundled campus at scale 0.1
(docs/control-group.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from advisor.daemon.arms import Ended, restored
from plugins.contract.control import ARMS, CONTROL, TREATED, arm_of

RESAMPLES = 2000
LEVEL = 0.95
CELLS_AT_ONCE = 4_000_000
"""Resamples are computed in chunks of at most this many weights (32 MB each)."""
DAY = 86400.0
Sample = tuple[str, float, bool, float | None, str | None, float | None]
"""(arm, energy Wh, completed, overhead s or None, machine of its last attempt or None,
submission time or None)."""


@dataclass(frozen=True)
class Figure:
    """One figure per arm and the ratio treated / control with its interval."""

    name: str
    unit: str
    treated: float
    control: float
    ratio: float
    low: float
    high: float


def sample_of(ended: Ended) -> Sample:
    """An ended job of the daemon's book as a sample."""
    _, arm, done, overhead, energy, _, _, machine, submit = ended
    return arm, energy, done, overhead, machine, submit


def samples_of_state(control: Mapping[str, Any]) -> list[Sample]:
    """The jobs of a snapshot's ``control`` book: ended ones, and the energy of open ones."""
    opened, ended = restored(control["book"])
    out = [sample_of(row) for row in ended]
    out += [
        (arm_of(job, control["percent"]), v[1], False, None, v[4], v[0])
        for job, v in opened.items()
    ]
    return out


@dataclass(frozen=True)
class Cells:
    """One arm's jobs summed per (day, machine) cell: energy, completed jobs, overhead (min) of
    completed jobs and their count (``sums``), with each cell's day and machine numbered."""

    day: np.ndarray
    machine: np.ndarray
    machines: int
    sums: np.ndarray


def _day(submit: float | None) -> int:
    """A job's day: of its submission; -1 for jobs whose submission the daemon did not see."""
    return -1 if submit is None else int(submit // DAY)


def _cells(rows: list[Sample], day_of: dict[int, int]) -> Cells:
    """One arm's jobs summed per cell, so that a resample weighs cells rather than jobs."""
    unit_of: dict[str | int, int] = {}
    cell_of: dict[tuple[int, int], int] = {}
    sums: list[list[float]] = []
    for i, (_, energy, done, overhead, machine, submit) in enumerate(rows):
        unit = unit_of.setdefault(machine if machine is not None else i, len(unit_of))
        c = cell_of.setdefault((day_of[_day(submit)], unit), len(sums))
        if c == len(sums):
            sums.append([0.0, 0.0, 0.0, 0.0])
        row = sums[c]
        row[0] += energy
        if done:
            row[1] += 1
            if overhead is not None:
                row[2] += overhead / 60.0
                row[3] += 1
    keys = np.array(list(cell_of), dtype=int).reshape(-1, 2)
    return Cells(keys[:, 0], keys[:, 1], len(unit_of), np.array(sums).reshape(-1, 4))


def _figures(sums: Any) -> tuple[Any, Any]:
    """Energy per completed job and mean overhead from summed units (the last axis)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[..., 0] / sums[..., 1], sums[..., 2] / sums[..., 3]


def _draws(rng: np.random.Generator, resamples: int, n: int) -> np.ndarray:
    """How often each of ``n`` units is drawn, per resample (n draws with replacement)."""
    picks = rng.integers(0, n, size=(resamples, n))
    return np.stack([np.bincount(p, minlength=n) for p in picks]).astype(float)


NAMES = (("energy per completed job", "Wh"), ("overhead", "min"))


@dataclass(frozen=True)
class Resampled:
    """Per figure (``NAMES``' order): each arm's value, and the ratio treated / control in each
    resample (those both arms define)."""

    point: dict[str, tuple[float, float]]
    ratios: tuple[np.ndarray, np.ndarray]


def resample(samples: Iterable[Sample], resamples: int = RESAMPLES, seed: int = 0) -> Resampled:
    """The pigeonhole bootstrap of both figures (module docstring)."""
    rng = np.random.default_rng(seed)
    rows = list(samples)
    day_of = {d: i for i, d in enumerate(sorted({_day(r[5]) for r in rows}))}
    cells, point = {}, {}
    for arm in ARMS:
        mine = [r for r in rows if r[0] == arm]
        if not any(r[2] for r in mine):
            raise ValueError(f"no completed job in the {arm} arm yet")
        cells[arm] = _cells(mine, day_of)
        energy, overhead = _figures(cells[arm].sums.sum(axis=0))
        if not np.isfinite(overhead):
            raise ValueError(f"no completed job in the {arm} arm whose submission was seen yet")
        point[arm] = (float(energy), float(overhead))
    boot: dict[str, list[np.ndarray]] = {arm: [] for arm in ARMS}
    chunk = max(1, CELLS_AT_ONCE // max(len(c.sums) for c in cells.values()))
    for start in range(0, resamples, chunk):
        n = min(chunk, resamples - start)
        by_day = _draws(rng, n, len(day_of))  # paired: the same days for both arms
        for arm, of_arm in cells.items():
            by_machine = _draws(rng, n, of_arm.machines)
            weight = by_day[:, of_arm.day] * by_machine[:, of_arm.machine]
            boot[arm].append(weight @ of_arm.sums)
    with np.errstate(divide="ignore", invalid="ignore"):  # a draw without a completed job
        figures = {arm: _figures(np.concatenate(b)) for arm, b in boot.items()}
    ratios = []
    for t, c in zip(figures[TREATED], figures[CONTROL], strict=True):
        both = np.isfinite(t) & np.isfinite(c) & (c > 0)  # (else a ratio of 0 or inf)
        ratios.append(t[both] / c[both])
    if not all(len(r) for r in ratios):
        raise ValueError("too few jobs in an arm for an interval yet")
    return Resampled(point, (ratios[0], ratios[1]))


def estimate(samples: Iterable[Sample], seed: int = 0) -> list[Figure]:
    """Energy per completed job (Wh) and mean overhead (min), treated against control."""
    drawn = resample(samples, seed=seed)
    out = []
    tail = (1 - LEVEL) / 2 * 100
    for i, (name, unit) in enumerate(NAMES):
        t, c = drawn.point[TREATED][i], drawn.point[CONTROL][i]
        low, high = np.percentile(drawn.ratios[i], [tail, 100 - tail])
        out.append(Figure(name, unit, t, c, t / c, float(low), float(high)))
    return out
