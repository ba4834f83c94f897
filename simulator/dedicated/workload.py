"""Rigid parallel jobs of a dedicated cluster, read from an SWF log (paper 001, section 3.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.trace_model import Jobs
from simulator.traces import read_swf
from simulator.traces._columns import Path_
from simulator.traces.swf import SwfLog

WALLTIME_STEPS_S = np.array([5, 15, 30, 60, 120, 240, 480, 720, 1440, 2880, 5760]) * 60.0
"""Requests users typically make; a log without walltimes gets the next step above the runtime."""


@dataclass(frozen=True)
class Workload:
    """Jobs sorted by arrival (seconds since the log's local midnight) and the cluster shape."""

    name: str
    nodes: int
    cores_per_node: int
    arrival: np.ndarray
    cores: np.ndarray
    walltime: np.ndarray
    runtime: np.ndarray
    user: np.ndarray

    def __len__(self) -> int:
        return len(self.arrival)

    def subset(self, index: np.ndarray, shift: float) -> Workload:
        """The jobs at ``index`` with arrivals moved by ``-shift`` (a day starts at 0)."""
        return Workload(
            self.name,
            self.nodes,
            self.cores_per_node,
            self.arrival[index] - shift,
            self.cores[index],
            self.walltime[index],
            self.runtime[index],
            self.user[index],
        )


def guessed_walltime(runtime: np.ndarray) -> np.ndarray:
    """The smallest usual request that covers the runtime (logs such as NASA iPSC have none)."""
    i = np.searchsorted(WALLTIME_STEPS_S, runtime, side="left")
    return np.where(i < len(WALLTIME_STEPS_S), WALLTIME_STEPS_S[np.minimum(i, 10)], runtime)


def left_out(
    log: SwfLog, nodes: int, cores_per_node: int, partition: int | None = None
) -> dict[str, np.ndarray]:
    """Records the power model cannot play, by reason (each a boolean mask over the log): no run
    time, no processors, more cores than the cluster, submitted before the log's start, or of
    another partition than ``partition``."""
    cores = np.where(log.procs_alloc > 0, log.procs_alloc, log.procs_req)
    out = {
        "without a run time": log.run <= 0,
        "without a processor count": cores <= 0,
        f"larger than the cluster ({nodes * cores_per_node} cores)": cores > nodes * cores_per_node,
        "submitted before the log's start": log.submit < 0,
    }
    if partition is not None:
        out[f"of another partition than {partition}"] = log.partition != partition
    return out


def read_workload(
    path: Path_, nodes: int, cores_per_node: int, partition: int | None = None
) -> Workload:
    """Jobs that ran and fit the cluster; runtime capped at the walltime (such jobs are killed)."""
    log = read_swf(path)
    cores = np.where(log.procs_alloc > 0, log.procs_alloc, log.procs_req)
    keep = ~np.logical_or.reduce(list(left_out(log, nodes, cores_per_node, partition).values()))
    run = log.run[keep].astype(float)
    wall = np.where(log.time_req[keep] > 0, log.time_req[keep], guessed_walltime(run))
    local = log.submit[keep] + (log.unix_start_time or 0) + log.int_header.get("TimeZone", 0)
    user = log.user[keep]
    return _workload(str(path), nodes, cores_per_node, local, cores[keep], wall, run, user)


def jobs_workload(jobs: Jobs, name: str, nodes: int, cores_per_node: int) -> Workload:
    """A live pool's exported jobs (``trace export``): those that completed and fit, each with
    the usual request above its run time as walltime (the export has none); times are UTC."""
    keep = np.isfinite(jobs.runtime) & (jobs.runtime > 0) & (jobs.cpus <= nodes * cores_per_node)
    run = jobs.runtime[keep].astype(float)
    users = np.unique(np.asarray(jobs.user, dtype=object), return_inverse=True)[1]
    return _workload(
        name, nodes, cores_per_node, jobs.submit[keep], jobs.cpus[keep], guessed_walltime(run),
        run, users[keep].astype(np.int64),
    )  # fmt: skip


def _workload(
    name: str, nodes: int, cores_per_node: int, local: np.ndarray, cores: np.ndarray,
    wall: np.ndarray, run: np.ndarray, user: np.ndarray,
) -> Workload:  # fmt: skip
    """Jobs by arrival from the midnight before the first one."""
    midnight = np.floor(local.min() / 86400.0) * 86400.0 if len(local) else 0.0
    order = np.argsort(local, kind="stable")
    return Workload(
        name=name,
        nodes=nodes,
        cores_per_node=cores_per_node,
        arrival=(local - midnight)[order],
        cores=cores[order].astype(np.int64),
        walltime=wall[order],
        runtime=np.minimum(run, wall)[order],
        user=user[order],
    )
