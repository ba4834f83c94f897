"""A pool's job history (``condor_history``) as the replay's jobs: when each job was submitted,
how long it needed, and when its user removed it. An administrator can then replay their own
job mix on the campus shapes before deploying a policy (docs/trace-formats.md, "From
condor_history").

A vanilla job restarts from the beginning after an eviction, so what a job needs is the attempt
that completed, not its whole wall time. A removed job never completed: the replay runs it as a
job that never finishes, removed when its user removed it, or when it was held if it was held
then (the shadow stamps ``LastVacateTime`` when it ends an attempt; a job held before any run
never ran, and is removed as it is submitted).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

import classad2
import numpy as np

from advisor.condor.epochs import schedd_of
from plugins.contract.job_ids import on_schedd
from simulator.trace_model import DEFAULT_CPUS, DEFAULT_MEMORY_MB, Jobs
from simulator.traces.errors import TraceError

ATTRIBUTES = (
    *("ClusterId", "ProcId", "GlobalJobId", "Owner", "QDate", "JobUniverse", "JobStatus"),
    *("EnteredCurrentStatus", "CompletionDate", "JobCurrentStartDate", "CommittedTime"),
    *("RemoteWallClockTime", "NumJobStarts", "RequestCpus", "RequestMemory"),
    *("LastJobStatus", "LastVacateTime"),
)
"""What is read of a job ad (``condor_history -af:h`` needs them named)."""
READ = (*ATTRIBUTES, "MemoryUsage", "ImageSize", "ResidentSetSize")
"""Those, and what HTCondor's default ``RequestMemory`` and ``MemoryUsage`` refer to: the rest
of an ad is parsed only where one of its expressions needs it (history_ads.py)."""
GLOBAL_JOB_ID = re.compile(r"^([^#]+)#(\d+\.\d+)#")
"""``schedd#cluster.proc#qdate``."""
REMOVED, COMPLETED, HELD = 3, 4, 5
IN_A_SLOT = {5, 10, 13}
"""Universes whose jobs run in an execute point's slot: vanilla (and container), java, vm."""
BACKWARDS = "completed before it started (CompletionDate before JobCurrentStartDate)"
"""Why a job whose ad contradicts itself is left out rather than given a run time of 0."""
ELSEWHERE = {
    7: "scheduler universe (DAGMan and the like)",
    12: "local universe",
    9: "grid universe",
}


@dataclass
class HistoryJobs:
    """The jobs, and what the administrator should know about how they were read."""

    jobs: Jobs
    ads: int = 0
    """Job ads read."""
    completed: int = 0
    removed: int = 0
    estimated: int = 0
    """Completed jobs whose run time is ``RemoteWallClockTime``, which sums every attempt."""
    left_out: Counter[str] = field(default_factory=Counter)


def _number(ad: classad2.ClassAd, name: str, default: float = 0.0) -> float:
    """The attribute's value as a number (an expression evaluated in its ad), else ``default``."""
    if name not in ad:
        return default
    value = ad.eval(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def _required(
    path: str | PathLike[str], ad: classad2.ClassAd, index: int, name: str, kind: type
) -> Any:
    """The attribute's value, of ``kind`` (a number: int or float, never a bool)."""
    if name not in ad:
        expected = "in every job ad (save condor_history -json, or add it to -af:h)"
        raise TraceError(path, None, name, expected, f"missing from job ad {index}")
    value = ad.eval(name)
    number = kind is float and isinstance(value, int | float) and not isinstance(value, bool)
    if not (number or isinstance(value, kind)):
        expected = "a number" if kind is float else "a string"
        raise TraceError(path, None, name, expected, f"{value!r} in job ad {index}")
    return value


def needed_seconds(ad: classad2.ClassAd) -> tuple[float, bool] | str:
    """(seconds the completed attempt ran, whether that is only an upper bound), or why the ad
    tells no run time.

    ``CommittedTime`` leaves out the attempts evicted without a checkpoint; the last start to
    the completion is that attempt too; ``RemoteWallClockTime`` sums every attempt, so it is the
    attempt itself only when the job started once. A completion before the last start is an ad
    whose times contradict each other: no run time of it can be trusted, not even 0.
    """
    committed = _number(ad, "CommittedTime")
    if committed > 0:
        return committed, False
    done, began = _number(ad, "CompletionDate"), _number(ad, "JobCurrentStartDate")
    if done > 0 and began > 0:
        return (done - began, False) if done >= began else BACKWARDS
    wall = _number(ad, "RemoteWallClockTime", -1.0)
    if wall >= 0:
        return wall, _number(ad, "NumJobStarts", 2.0) != 1
    return "completed, without a run time"


def job_id_of(ad: classad2.ClassAd, place: int) -> str:
    """``cluster.proc@schedd`` as the live daemon names it (the schedd from ``GlobalJobId``,
    also the ids where ``ClusterId`` is missing); a job listed without its ids is numbered by
    its place in the histories, a batch of its own."""
    if "ClusterId" not in ad or "ProcId" not in ad:
        found = GLOBAL_JOB_ID.match(str(ad.get("GlobalJobId", "")))
        return on_schedd(found[2], found[1]) if found else f"{place}.0"
    job = f"{int(_number(ad, 'ClusterId'))}.{int(_number(ad, 'ProcId'))}"
    schedd = schedd_of(ad)
    return on_schedd(job, schedd) if schedd else job


@dataclass(frozen=True)
class _Row:
    submit: float
    user: str
    runtime: float
    remove: float
    cpus: int
    memory_mb: float
    estimated: bool = False


def _row(path: str | PathLike[str], ad: classad2.ClassAd, index: int) -> _Row | str:
    """The job's row, or why it is left out."""
    submit = float(_required(path, ad, index, "QDate", float))
    user = _required(path, ad, index, "Owner", str)
    universe = int(_number(ad, "JobUniverse", 5))
    if universe not in IN_A_SLOT:
        return ELSEWHERE.get(universe, f"universe {universe}")
    cpus = max(int(_number(ad, "RequestCpus", DEFAULT_CPUS)), 1)
    memory = _number(ad, "RequestMemory", DEFAULT_MEMORY_MB)
    memory = memory if memory > 0 else DEFAULT_MEMORY_MB
    status = int(_number(ad, "JobStatus"))
    status = status or (COMPLETED if _number(ad, "CompletionDate") > 0 else REMOVED)
    if status == COMPLETED:
        needed = needed_seconds(ad)
        if isinstance(needed, str):
            return needed
        return _Row(submit, user, needed[0], np.inf, cpus, memory, needed[1])
    if status == REMOVED:
        removed = _number(ad, "EnteredCurrentStatus")
        if removed <= 0:
            return "removed, without EnteredCurrentStatus"
        if int(_number(ad, "LastJobStatus")) == HELD:  # it ran no more once held
            ran = _number(ad, "JobCurrentStartDate") > 0
            ended = _number(ad, "LastVacateTime", removed) if ran else submit
            removed = min(removed, ended)
        return _Row(submit, user, np.inf, max(removed, submit), cpus, memory)
    return f"JobStatus {status}"


def history_jobs(
    histories: Iterable[tuple[str | PathLike[str], Iterable[classad2.ClassAd]]],
) -> HistoryJobs:
    """The jobs of every history (a file and its ads) that ran or would run in a slot, sorted
    by submission; a job listed in two histories is counted once."""
    rows: dict[str, _Row] = {}
    left_out: Counter[str] = Counter()
    place = 0
    for path, ads in histories:  # (``place`` ends as the number of ads read)
        for index, ad in enumerate(ads, start=1):
            place += 1
            row = _row(path, ad, index)
            job_id = job_id_of(ad, place)
            if isinstance(row, str) or job_id in rows:
                left_out[row if isinstance(row, str) else "listed twice"] += 1
            else:
                rows[job_id] = row
    ids = sorted(rows, key=lambda j: rows[j].submit)
    kept = [rows[j] for j in ids]
    jobs = Jobs(
        job_id=ids,
        user=[r.user for r in kept],
        submit=np.array([r.submit for r in kept], dtype=float),
        runtime=np.array([r.runtime for r in kept], dtype=float),
        remove=np.array([r.remove for r in kept], dtype=float),
        cpus=np.array([r.cpus for r in kept], dtype=np.int64),
        memory_mb=np.array([r.memory_mb for r in kept], dtype=float),
    )
    completed = int(np.isfinite(jobs.runtime).sum())
    estimated = sum(r.estimated for r in kept)
    return HistoryJobs(jobs, place, completed, len(kept) - completed, estimated, left_out)
