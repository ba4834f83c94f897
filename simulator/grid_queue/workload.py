"""A grid workload: jobs with a VO and an execution time, the processors and the VO shares."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from plugins.utility.functions import INTERACTIVE_LIMIT_S

DRAIN_JOBS = 500
"""The last 500 jobs are not counted: the queue is draining then (paper 002, sec. V-B)."""


@dataclass(frozen=True)
class GridWorkload:
    """Jobs sorted by submit time (seconds), their VO and execution time (the expected one)."""

    name: str
    processors: int
    submit: np.ndarray
    runtime: np.ndarray
    group: list[str]
    shares: dict[str, float]
    drain: int = DRAIN_JOBS
    user: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if np.any(np.diff(self.submit) < 0):
            raise ValueError(f"{self.name}: jobs must be sorted by submit time")
        if not (len(self.submit) == len(self.runtime) == len(self.group)):
            raise ValueError(f"{self.name}: submit, runtime and group differ in length")

    def __len__(self) -> int:
        return len(self.submit)

    @property
    def interactive(self) -> np.ndarray:
        return self.runtime < INTERACTIVE_LIMIT_S

    @property
    def counted(self) -> np.ndarray:
        """Mask of the jobs that enter the statistics: all but the last ``drain`` submitted."""
        mask = np.ones(len(self), dtype=bool)
        mask[max(len(self) - self.drain, 0) :] = False
        return mask

    def user_of(self, j: int) -> str:
        return self.user[j] if self.user else self.group[j]
