"""What became of the jobs that reached each prior-hours class: their runtimes and whether they
ever completed, learned from the attempts the pool reports.

A job reaches class k (paper 000 sec. 4: its longest earlier attempt in whole hours) once an
attempt of at least k hours was evicted. Of the jobs that reached class k and then left the
queue, the share removed without ever completing estimates the chance that a class-k job is a
never-finisher; completed runtimes give the runtime a class-k job still needs (a vanilla job
restarts from the beginning, so a new attempt needs its whole runtime, known to exceed k hours).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.clock import HOUR

BINS_PER_HOUR = 4
RUNTIME_BINS = PRIOR_HOURS_CLASSES * BINS_PER_HOUR + 1
"""Completed runtimes in quarter hours; the last bin holds every runtime of a day or more."""
DEFAULT_RUNTIME_H = 2.0
"""Before any job completed: the papers' typical good job (most under three hours)."""
CENTRES = (np.arange(RUNTIME_BINS) + 0.5) / BINS_PER_HOUR
"""Each runtime bin's centre (hours)."""


def fallback_h(k: int) -> float:
    """The runtime a class-k job is taken to need before any such job completed."""
    return DEFAULT_RUNTIME_H if k == 0 else k + 1.0


def lower_bound(successes: float, n: float, z: float = 1.96) -> float:
    """Wilson's lower confidence bound of a proportion (95% for z = 1.96)."""
    if n <= 0:
        return 0.0
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


class JobFates:
    def __init__(self) -> None:
        self.longest: dict[str, float] = {}
        """Per job in the pool that was evicted before, its longest attempt (seconds)."""
        self.left = np.zeros(PRIOR_HOURS_CLASSES)
        """Per class, the jobs that reached it and left the queue since."""
        self.never_finished = np.zeros(PRIOR_HOURS_CLASSES)
        self.runtimes = np.zeros(RUNTIME_BINS)

    @staticmethod
    def class_of(seconds: float) -> int:
        return min(int(seconds // HOUR), PRIOR_HOURS_CLASSES - 1)

    def evicted(self, job: str, ran_s: float) -> None:
        self.longest[job] = max(self.longest.get(job, 0.0), ran_s)

    def completed(self, job: str, runtime_s: float) -> None:
        self.runtimes[min(int(runtime_s / HOUR * BINS_PER_HOUR), RUNTIME_BINS - 1)] += 1
        self._left(job, completed=True)

    def removed(self, job: str) -> None:
        self._left(job, completed=False)

    def _left(self, job: str, completed: bool) -> None:
        reached = self.class_of(self.longest.pop(job, 0.0)) + 1
        self.left[:reached] += 1
        if not completed:
            self.never_finished[:reached] += 1

    def never_finisher_bound(self) -> np.ndarray:
        """Per class, a 95% lower bound on the share of its jobs that never finish."""
        return np.array(
            [lower_bound(nf, n) for nf, n in zip(self.never_finished, self.left, strict=True)]
        )

    def runtime_needed_h(self) -> np.ndarray:
        """Per class k, the mean runtime of the completed jobs that ran over k hours (hours);
        k + 1 where none did yet."""
        out = np.empty(PRIOR_HOURS_CLASSES)
        for k in range(PRIOR_HOURS_CLASSES):
            tail = self.runtimes[k * BINS_PER_HOUR :]
            n = tail.sum()
            out[k] = float(tail @ CENTRES[k * BINS_PER_HOUR :] / n) if n else fallback_h(k)
        return out

    def runtime_spread(self) -> tuple[np.ndarray, np.ndarray]:
        """Runtimes (hours, the bins' centres) and per class k the share of its completed jobs
        of each (those that ran over k hours); the fallback runtime where none did yet."""
        shares = np.zeros((PRIOR_HOURS_CLASSES, RUNTIME_BINS))
        for k in range(PRIOR_HOURS_CLASSES):
            tail = self.runtimes[k * BINS_PER_HOUR :]
            if tail.sum():
                shares[k, k * BINS_PER_HOUR :] = tail / tail.sum()
            else:
                shares[k, min(int(fallback_h(k) * BINS_PER_HOUR), RUNTIME_BINS - 1)] = 1.0
        return CENTRES, shares

    def state_dict(self) -> dict[str, Any]:
        return {
            "longest": dict(self.longest),
            "left": self.left.tolist(),
            "never_finished": self.never_finished.tolist(),
            "runtimes": self.runtimes.tolist(),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.longest = {str(k): float(v) for k, v in state["longest"].items()}
        self.left = np.asarray(state["left"], dtype=float)
        self.never_finished = np.asarray(state["never_finished"], dtype=float)
        self.runtimes = np.asarray(state["runtimes"], dtype=float)
