"""The LCG 2005 grid log as a paper 002 workload: one site (SWF partition), VO = SWF group.

The paper's EGEE trace is one site (LAL, P = 100, 6000 jobs); the LCG log covers 170 sites, so
one site's jobs are taken on P processors. Shares are the VOs' actual work proportions (a
feasible target, as the paper's site shares).
"""

from __future__ import annotations

import numpy as np

from simulator.grid_queue.workload import GridWorkload
from simulator.traces._columns import Path_
from simulator.traces.swf import read_swf

DEFAULT_SITE = 52
"""cmslcgce.fnal.gov: of the sites with 6000 jobs, the closest to the paper's trace (64% of the
jobs interactive, 2.4% of the work; paper: > 62%, < 3%) and the only one whose interactive jobs
queue at all on P = 100 (offered load 1.69; rl.ac.uk at 0.39 and in2p3.fr at 0.76 leave a FIFO
median of 0)."""


def lcg_workload(
    path: Path_, *, partition: int = DEFAULT_SITE, processors: int = 100, jobs: int = 6000
) -> GridWorkload:
    """The first ``jobs`` jobs of one partition, submit times from 0, VO ``g<group>``."""
    log = read_swf(path)
    chosen = np.flatnonzero((log.partition == partition) & (log.run >= 0))
    if not len(chosen):
        raise ValueError(f"{path}: partition {partition} has no jobs with a known run time")
    order = chosen[np.argsort(log.submit[chosen], kind="stable")][:jobs]
    runtime = log.run[order].astype(np.float64)
    group = [f"g{g}" for g in log.group[order].tolist()]
    work: dict[str, float] = {}
    for g, r in zip(group, runtime.tolist(), strict=True):
        work[g] = work.get(g, 0.0) + r
    total = sum(work.values()) or 1.0
    submit = log.submit[order].astype(np.float64)
    return GridWorkload(
        name=f"lcg-site{partition}",
        processors=processors,
        submit=submit - submit[0],
        runtime=runtime,
        group=group,
        shares={g: w / total for g, w in sorted(work.items())},
        user=[f"u{u}" for u in log.user[order].tolist()],
    )
