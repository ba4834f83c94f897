"""Assemble a replayable ``Trace`` from the sources a user names: the campus generator, trace
files, an SWF job log, or an FTA availability trace (machines that come and go).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from hashlib import blake2b
from pathlib import Path

import numpy as np

from plugins.contract.job_ids import batch_of
from simulator.campus.scenario import CampusConfig, generate_campus, load_campus_config
from simulator.campus.shapes import load_shapes, shape_member
from simulator.trace_model import DAY, PARTITIONABLE, Jobs, OwnerSessions, Trace
from simulator.traces import (
    fta_unavailability,
    read_fta,
    read_inventory,
    read_jobs,
    read_owner_sessions,
    read_swf,
    swf_jobs,
    unrecorded,
)


@dataclass
class SourceSpec:
    """What the user asked for; exactly one machine source (campus, machines file or FTA)."""

    scenario: str | None = None
    scenario_config: Path | None = None
    shape: str | None = None
    """A pool shape of the campus (``simulator.campus.shapes``), its member drawn by ``seed``."""
    shapes_file: Path | None = None
    days: int | None = None
    scale: float = 1.0
    seed: int = 1
    machines: Path | None = None
    owners: Path | None = None
    jobs: Path | None = None
    swf: Path | None = None
    fta: Path | None = None
    fta_nodes: int | None = None
    slots: str | None = None
    """Every machine takes jobs this way (``single`` or ``partitionable``); None: as the source
    says (the campus scenario: single)."""


class SourceError(ValueError):
    """The combination of sources is not replayable; the message says what to add or drop."""


WEEK = 7 * DAY


def _shift(jobs: Jobs, to: float, whole_weeks: bool = False) -> Jobs:
    """Move a job log so its first submission is at ``to`` (SWF logs start at their own epoch),
    or in the week from ``to`` at its own hour of the week (a pool's history: desktops keep a
    weekly rhythm, and so do their users' submissions)."""
    if not len(jobs):
        return jobs
    delta = to - float(jobs.submit[0])
    if whole_weeks:
        delta = np.ceil(delta / WEEK) * WEEK
    return dataclasses.replace(jobs, submit=jobs.submit + delta, remove=jobs.remove + delta)


def _machine_span(trace: Trace) -> tuple[float, float]:
    """When the generated or FTA machines are known: the scenario's period, the FTA's
    intervals."""
    if trace.end > trace.start:
        return trace.start, trace.end
    ends = trace.unavailability.end
    return trace.start, float(ends.max()) if len(ends) else trace.start


def jobs_in_period(trace: Trace, jobs: Jobs) -> tuple[Jobs, str]:
    """``jobs`` (a pool's history) moved by whole weeks into the first week of the generated or
    FTA machines when its first submission lies outside their period, so every job keeps its
    hour of the week; and what was done, for the user ("" when nothing was). A period shorter
    than a week has no whole first week: there the first submission is moved to its start."""
    start, end = _machine_span(trace)
    first = float(jobs.submit[0]) if len(jobs) else start
    if start <= first < end:
        return jobs, ""
    if end - start < WEEK:
        moved = _shift(jobs, trace.start)
        days = (float(moved.submit[0]) - first) / DAY
        return moved, (
            f"submissions moved {abs(days):.1f} days {'earlier' if days < 0 else 'later'}, to"
            f" the start of the machine trace's {(end - start) / DAY:g}-day period (shorter than"
            " a week, so the jobs' hours of the week are not kept)"
        )
    moved = _shift(jobs, trace.start, whole_weeks=True)
    weeks = round((float(moved.submit[0]) - first) / WEEK)
    return moved, (
        f"submissions moved {abs(weeks)} weeks {'earlier' if weeks < 0 else 'later'},"
        " into the machine trace's first week (each at its hour of the week)"
    )


def thinned(jobs: Jobs, scale: float) -> tuple[Jobs, str]:
    """A share ``scale`` of the batches of ``jobs`` (a pool's history, its pool at scale 1), as
    the campus's own jobs shrink with its machines; and what was done ("" at scale 1 or more: a
    history is not grown). Whole batches are kept, since a batch's jobs share their fate, and
    which ones hangs on a hash of the batch's id, so every replay of the file keeps the same.
    ``replay --jobs`` does not thin: its file may come from a campus already at that scale."""
    if scale >= 1 or not len(jobs):
        return jobs, ""
    batches = [batch_of(job) for job in jobs.job_id]
    bar = scale * 2**64
    kept_batches = {
        b for b in set(batches) if int.from_bytes(blake2b(b.encode(), digest_size=8).digest()) < bar
    }
    keep = np.fromiter((b in kept_batches for b in batches), bool, len(batches))
    return jobs.subset(keep), (
        f"--scale {scale} kept {int(keep.sum())} of {len(jobs)} jobs"
        f" ({len(kept_batches)} of {len(set(batches))} batches), as the machines shrink"
    )


def runnable(trace: Trace) -> tuple[Jobs, str]:
    """The jobs some machine could take, and what was left out ("" when none was). HTCondor
    leaves a job no machine can take idle, apart from the others (its own autocluster); the
    replay keeps a class of jobs behind its oldest (simulator/campus/packing.py), so such a job
    would stall its whole class for the year. A single-slot machine takes any job whole, a
    partitionable one a job within its cores and memory (``simulator/campus/shared_pool.py``)."""
    jobs, machines = trace.jobs, trace.inventory.machines
    if not len(jobs) or any(m.slots != PARTITIONABLE for m in machines):
        return jobs, ""
    fits = np.zeros(len(jobs), dtype=bool)
    for cores, memory in {(m.cores, m.memory_mb) for m in machines}:  # a few machine types
        fits |= (jobs.cpus <= cores) & (jobs.memory_mb <= memory)
    if fits.all():
        return jobs, ""
    return jobs.subset(fits), (
        f"{int((~fits).sum())} of {len(jobs)} jobs request more cores or memory than any machine"
        " has, so they are left out (HTCondor would leave them idle, apart from the others)"
    )


def _period(trace: Trace, days: int | None) -> None:
    """A trace file's period: from its first dated event (an owner's login, a node going down or
    a job's submission, whichever comes first: a job before the first login does not wait for
    it), for ``days`` or until a day after its last."""
    first = float(trace.jobs.submit.min()) if len(trace.jobs) else math.inf
    trace.start = min(trace.start, first)
    if not math.isfinite(trace.start):
        raise SourceError("nothing dated to replay: the owner sessions and the jobs are empty")
    last = max(
        float(trace.jobs.submit.max()) if len(trace.jobs) else trace.start,
        float(trace.owners.logout.max()) if len(trace.owners) else trace.start,
    )
    trace.end = trace.start + days * DAY if days else last + DAY


def shaped(config: CampusConfig, spec: SourceSpec) -> CampusConfig:
    """``config`` as the member of ``spec.shape`` its seed draws (unchanged without a shape)."""
    if spec.shape is None:
        return config
    shapes = load_shapes(spec.shapes_file, config.opening_hours)
    if spec.shape not in shapes:
        raise SourceError(f"unknown shape {spec.shape!r}; available: {', '.join(shapes)}")
    return shape_member(config, shapes[spec.shape], spec.seed)


def assemble(spec: SourceSpec) -> tuple[Trace, list[str]]:
    """The trace and notes for the user (e.g. how many SWF jobs had no run time)."""
    notes: list[str] = []
    chosen = [s for s in (spec.scenario, spec.machines, spec.fta) if s is not None]
    if len(chosen) != 1:
        raise SourceError(
            "name exactly one machine source: --scenario campus, --machines F or --fta F"
        )
    if spec.scenario is not None:
        if spec.scenario != "campus":
            raise SourceError(f"unknown scenario {spec.scenario!r}; available: campus")
        config = shaped(load_campus_config(spec.scenario_config), spec)
        trace = generate_campus(config, days=spec.days or 365, scale=spec.scale, seed=spec.seed)
    elif spec.machines is not None:
        if spec.owners is None or (spec.jobs is None and spec.swf is None):
            raise SourceError("--machines needs --owners F and a job source (--jobs F or --swf F)")
        inventory = read_inventory(spec.machines)
        owners = read_owner_sessions(spec.owners, inventory)
        start = float(owners.login[0]) if len(owners) else math.inf
        trace = Trace(inventory, owners, Jobs([], [], *(np.empty(0),) * 3), start, start)
    else:
        assert spec.fta is not None
        fta = read_fta(spec.fta)
        inventory, down = fta_unavailability(fta, limit=spec.fta_nodes)
        if not inventory.machines:
            raise SourceError(f"{spec.fta}: no node in it; an FTA event_trace.tab lists nodes")
        start = float(down.start.min()) if len(down.start) else math.inf
        trace = Trace(
            inventory, OwnerSessions.empty(), Jobs([], [], *(np.empty(0),) * 3), start, start, down
        )
    if spec.jobs is not None:
        trace.jobs = read_jobs(spec.jobs)
        if spec.machines is None and math.isfinite(trace.start):
            trace.jobs, moved = jobs_in_period(trace, trace.jobs)
            if moved:
                notes.append(f"{spec.jobs}: {moved}")
    elif spec.swf is not None:
        log = read_swf(spec.swf)
        if not len(log):  # as an empty jobs file is refused (a wrong file may look empty)
            raise SourceError(f"--swf {spec.swf}: no job line in it; an SWF log has one a job")
        jobs, dropped = swf_jobs(log, skip_unknown_runtime=True)
        if dropped:
            notes.append(f"{spec.swf}: {dropped} jobs without a run time (SWF -1) left out")
        trace.jobs = _shift(jobs, trace.start if math.isfinite(trace.start) else 0.0)
        notes.append(f"{spec.swf}: submissions shifted to start with the machine trace")
    elif spec.scenario is None:
        raise SourceError("no job source: add --jobs F or --swf F")
    if spec.slots is not None:
        machines = trace.inventory.machines
        trace.inventory.machines = [dataclasses.replace(m, slots=spec.slots) for m in machines]
    if spec.scenario is None:
        _period(trace, spec.days)
    if spec.fta is not None:
        silent = unrecorded(fta, trace.inventory, trace.start, trace.end)
        if silent:
            notes.append(
                f"{spec.fta}: {silent} of {len(trace.inventory.machines)} nodes have no interval"
                " in the replayed period, so are up throughout (--fta-nodes takes the first by"
                " id)"
            )
    trace.jobs, unfit = runnable(trace)
    if unfit:
        notes.append(unfit)
    late = int((trace.jobs.submit >= trace.end).sum())
    if late:
        notes.append(
            f"{late} of {len(trace.jobs)} jobs are submitted after the period's end, so"
            " left out (a longer --days keeps them)"
        )
    return trace, notes
