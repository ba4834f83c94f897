"""Idle jobs by prior-hours class: the class the advice ranks a queued job in, and the count of
idle jobs by their own class that a policy is shown (``PoolView.idle_jobs_by_prior_hours``).

The count is what the daemon reads from the schedd (advisor/condor/job_queue.py): every idle job,
in the class of its longest attempt (known from the epochs with or without job edits), whether
advice keeps it off, the starvation bound released it or it is in the control group. A policy is
shown the same queue in a replay as live (docs/live-daemon.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from plugins.contract.advice import PRIOR_HOURS_CLASSES, JobAdvice
from plugins.contract.policy import MachineView, PoolView

LAST_CLASS = PRIOR_HOURS_CLASSES - 1


def ranked_class(attempt_s: float, advice: JobAdvice | None) -> int:
    """A job's class: its longest (or last) attempt in whole hours, or the hours its advice says
    it needs if more (``ADVISOR_CLASS`` in deploy/common/40), capped at the last class."""
    hours = int(attempt_s // 3600)
    if advice is not None and advice.needs_hours is not None and advice.needs_hours > hours:
        hours = advice.needs_hours
    return hours if hours < LAST_CLASS else LAST_CLASS


class IdleJobs:
    """Idle entries of the job book by their own class, counted as they enter and leave."""

    def __init__(self, cpus: list[int]) -> None:
        self.by_class = [0] * PRIOR_HOURS_CLASSES
        self.cpus = cpus
        """Per entry, the cores it requests."""
        self.by_cpus: dict[int, int] = {}
        """The same idle entries by the cores they request (``PoolView.idle_jobs_by_cpus``)."""
        self.class_of: dict[int, int] = {}
        self.longest_s: dict[int, float] = {}
        """Per evicted entry, its longest attempt (the book keeps its last without job edits)."""

    def evicted(self, j: int, attempt_s: float) -> None:
        if attempt_s > self.longest_s.get(j, 0.0):
            self.longest_s[j] = attempt_s

    def ran_s(self, j: int) -> float:
        """Entry ``j``'s longest evicted attempt (0: none)."""
        return self.longest_s.get(j, 0.0)

    def entered(self, j: int) -> None:
        """Entry ``j`` is idle (again: no change); its class cannot change while it is."""
        if j not in self.class_of:
            k = self.class_of[j] = ranked_class(self.ran_s(j), None)
            self.by_class[k] += 1
            cpus = self.cpus[j]
            self.by_cpus[cpus] = self.by_cpus.get(cpus, 0) + 1

    def left(self, j: int) -> None:
        """Entry ``j`` started or was removed (no change if it was not idle)."""
        k = self.class_of.pop(j, -1)
        if k >= 0:
            self.by_class[k] -= 1
            self.by_cpus[self.cpus[j]] -= 1

    def pool_view(self, machines: Sequence[MachineView], new_jobs: Sequence[str] = ()) -> PoolView:
        """What a policy is shown: ``machines`` and this queue, as the daemon shows it."""
        return PoolView(machines, tuple(self.by_class), new_jobs, dict(self.by_cpus))
