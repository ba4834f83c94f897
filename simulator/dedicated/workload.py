"""Rigid parallel jobs of a dedicated cluster, read from an SWF log (paper 001, section 3.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.traces import read_swf
from simulator.traces._columns import Path_

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


def read_workload(path: Path_, nodes: int, cores_per_node: int) -> Workload:
    """Jobs that ran and fit the cluster; runtime capped at the walltime (such jobs are killed)."""
    log = read_swf(path)
    cores = np.where(log.procs_alloc > 0, log.procs_alloc, log.procs_req)
    keep = (log.run > 0) & (cores > 0) & (cores <= nodes * cores_per_node) & (log.submit >= 0)
    run = log.run[keep].astype(float)
    wall = np.where(log.time_req[keep] > 0, log.time_req[keep], guessed_walltime(run))
    local = log.submit[keep] + (log.unix_start_time or 0) + log.int_header.get("TimeZone", 0)
    midnight = np.floor(local.min() / 86400.0) * 86400.0
    order = np.argsort(local, kind="stable")
    return Workload(
        name=str(path),
        nodes=nodes,
        cores_per_node=cores_per_node,
        arrival=(local - midnight)[order],
        cores=cores[keep][order].astype(np.int64),
        walltime=wall[order],
        runtime=np.minimum(run, wall)[order],
        user=log.user[keep][order],
    )
