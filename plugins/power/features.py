"""The agent's observation (paper 001, section 4.1): platform, queue and simulation state.

One observation: node counts per state and reserved (over G); queue length; the scheduler's
promise for the first job; free cores on computing nodes; the time of day; and eq. 1 for the first
10 jobs [q_k, wall_k, stretch_k (eq. 2), |j_user|]. The state stacks the last 20 observations,
which stands in for the paper's LSTM: a feed-forward net over a fixed window sees the same history.
"""

from __future__ import annotations

import math

import numpy as np

from plugins.power.view import COMPUTING, ClusterView

FIRST_JOBS = 10
HISTORY = 20
PER_JOB = 4
OBSERVATION_SIZE = 5 + 1 + 1 + 1 + 1 + 2 + FIRST_JOBS * PER_JOB
DAY_S = 86400.0


def observe(view: ClusterView) -> np.ndarray:
    """One observation vector, every entry roughly in [0, 1]."""
    g, c = max(view.nodes, 1), max(view.cores_per_node, 1)  # an empty pool: zeros, not NaN
    counts = np.bincount(view.node_state, minlength=5)[:5] / g
    n_queue = len(view.queue_cores)
    wait_h = (view.promise - view.now) / 3600.0 if math.isfinite(view.promise) else 24.0
    computing = (view.node_state == COMPUTING) & ~view.reserved
    spare = (c * computing.sum() - view.running_cores.sum()) / (g * c)
    phase = 2 * math.pi * (view.now % DAY_S) / DAY_S
    head = np.zeros((FIRST_JOBS, PER_JOB))
    k = min(FIRST_JOBS, n_queue)
    if k:
        wall = view.queue_walltime[:k]
        head[:k, 0] = view.queue_cores[:k] / (g * c)
        head[:k, 1] = np.log1p(wall / 60.0) / 8.0
        head[:k, 2] = np.minimum((view.now - view.queue_arrival[:k]) / wall, 2.0)
        head[:k, 3] = np.log1p(view.queue_user_jobs[:k]) / 5.0
    return np.concatenate(
        [
            counts,
            [view.reserved.sum() / g, math.log1p(n_queue) / 5.0, min(wait_h, 24.0) / 24.0],
            [spare, math.sin(phase), math.cos(phase)],
            head.ravel(),
        ]
    )


class History:
    """The last ``HISTORY`` observations, oldest first, zero before the episode began."""

    def __init__(self) -> None:
        self.window = np.zeros((HISTORY, OBSERVATION_SIZE))
        self.last_now = -math.inf

    def push(self, view: ClusterView) -> np.ndarray:
        if view.now < self.last_now:
            self.window[:] = 0.0
        self.last_now = view.now
        self.window = np.roll(self.window, -1, axis=0)
        self.window[-1] = observe(view)
        return self.window.ravel()
