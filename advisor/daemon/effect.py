"""The estimated effect of the advice: the treated arm against the control arm.

Two figures per arm: energy per completed job (all the arm's attempt energy, wasted included,
over its completed jobs) and mean overhead of completed jobs. The effect is their ratio, treated
over control (below 1: the advice saves), with a percentile bootstrap interval: jobs are
resampled with replacement within each arm (``RESAMPLES`` times, seeded, so a report is
reproducible) and the ratio recomputed. A job is one sample (energy, completed, overhead), which
keeps the heavy tails of both figures and the share of never-finishing jobs in the interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from plugins.contract.control import ARMS, CONTROL, TREATED, arm_of

RESAMPLES = 2000
LEVEL = 0.95
Sample = tuple[str, float, bool, float | None]
"""(arm, energy Wh, completed, overhead s or None)."""


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


def samples_of_state(control: Mapping[str, Any]) -> list[Sample]:
    """The jobs of a snapshot's ``control`` book: ended ones, and the energy of open ones."""
    book, percent = control["book"], control["percent"]
    out: list[Sample] = [(arm, e, done, ovh) for _, arm, done, ovh, e, *_ in book["ended"]]
    out += [(arm_of(job, percent), e, False, None) for job, (_, e, *_) in book["open"].items()]
    return out


def _figures(energy: np.ndarray, done: np.ndarray, overhead: np.ndarray) -> tuple[Any, Any]:
    """Energy per completed job and mean overhead (over the last axis: per resample too)."""
    completed = done.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_job = energy.sum(axis=-1) / completed
        mean_overhead = np.nansum(overhead, axis=-1) / np.sum(~np.isnan(overhead), axis=-1)
    return per_job, mean_overhead


def estimate(samples: Iterable[Sample], seed: int = 0) -> list[Figure]:
    """Energy per completed job (Wh) and mean overhead (min), treated against control."""
    rng = np.random.default_rng(seed)
    arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    rows = list(samples)
    for arm in ARMS:
        mine = [r for r in rows if r[0] == arm]
        if not any(done for _, _, done, _ in mine):
            raise ValueError(f"no completed job in the {arm} arm yet")
        energy = np.array([e for _, e, _, _ in mine])
        done = np.array([d for _, _, d, _ in mine])
        overhead = np.array([o / 60.0 if d and o is not None else np.nan for _, _, d, o in mine])
        arrays[arm] = (energy, done, overhead)
    point = {arm: _figures(*arrays[arm]) for arm in ARMS}
    boot = {}
    for arm in ARMS:
        energy, done, overhead = arrays[arm]
        pick = rng.integers(0, len(energy), size=(RESAMPLES, len(energy)))
        boot[arm] = _figures(energy[pick], done[pick], overhead[pick])
    out = []
    tail = (1 - LEVEL) / 2 * 100
    for i, (name, unit) in enumerate((("energy per completed job", "Wh"), ("overhead", "min"))):
        t, c = float(point[TREATED][i]), float(point[CONTROL][i])
        ratios = boot[TREATED][i] / boot[CONTROL][i]
        ratios = ratios[np.isfinite(ratios)]
        low, high = np.percentile(ratios, [tail, 100 - tail])
        out.append(Figure(name, unit, t, c, t / c, float(low), float(high)))
    return out
