"""Paper 002's measures: waiting-time statistics per class (Tables II, III), relative overhead,
and the fair-share utility over time (figures 4, 5, 7), counting all but the last 500 jobs."""

from __future__ import annotations

import numpy as np

from plugins.utility.functions import fairness_utility
from simulator.grid_queue.run import GridRun


def waiting_stats(run: GridRun) -> dict[str, dict[str, float]]:
    """Mean, std, max and median waiting time (s) of the counted interactive and batch jobs, and
    their work-weighted mean sum(p W) / sum(p): by Kleinrock's conservation law it is nearly the
    same under every greedy, non-preemptive order, so it bounds what reordering can gain."""
    w = run.workload
    out = {}
    for name, mask in (("interactive", w.interactive), ("batch", ~w.interactive)):
        wait = run.wait[mask & w.counted]
        work = w.runtime[mask & w.counted]
        if not len(wait):
            wait, work = np.zeros(1), np.ones(1)
        out[name] = {
            "mean": float(wait.mean()),
            "std": float(wait.std()),
            "max": float(wait.max()),
            "median": float(np.median(wait)),
            "work_mean": float((work * wait).sum() / max(work.sum(), 1e-9)),
            "jobs": float(len(wait) if (mask & w.counted).any() else 0),
        }
    return out


def relative_overhead(run: GridRun) -> np.ndarray:
    """Waiting time over execution time, per counted job (sec. V-C)."""
    w = run.workload
    return run.wait[w.counted] / np.maximum(w.runtime[w.counted], 1.0)


def fairness_over_time(run: GridRun, times: np.ndarray) -> np.ndarray:
    """F(t) (eq. 4) from the service each VO has received by each of ``times``."""
    w = run.workload
    end = run.start + w.runtime
    groups = np.array(w.group)
    out = np.empty(len(times))
    for i, t in enumerate(times):
        served = np.clip(np.minimum(end, t) - run.start, 0.0, None)
        total = served.sum()
        received = {g: served[groups == g].sum() / total if total else 0.0 for g in w.shares}
        out[i] = fairness_utility(w.shares, received)
    return out
