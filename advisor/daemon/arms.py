"""What the daemon observes per arm of the control group, from the events it already receives.

A job's arm follows from its id (``plugins/contract/control.py``, the shipped expressions' own
function). Per job the book adds up its attempts' energy (their duration at the machine's active
power, the inventory's figure each ``AttemptEnded`` carries), the wasted part and the evictions;
when the job completes, its overhead is finish - submit - execution time (docs/architecture.md
section 4), which is the completing attempt's start minus the submission. Ended jobs are kept
for ``keep_s`` as samples for the report and the guard; per-arm totals since the start are kept
for ``/metrics``. Jobs whose submission the daemon never saw (queued before it started) count
in the totals but give no overhead.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from plugins.contract.control import ARMS, arm_of
from plugins.contract.events import AttemptEnded, AttemptOutcome, Event, JobQueued, JobRemoved

EVICTED = (AttemptOutcome.EVICTED_OWNER, AttemptOutcome.EVICTED_REBOOT)
TOTALS: tuple[str, ...] = ("completed", "removed", "evictions", "energy_wh", "wasted_wh")
TOTALS += ("wasted_hours", "overhead_s", "overhead_jobs")
Ended = tuple[float, str, bool, float | None, float, float, int, str | None, float | None]
"""(end time, arm, completed, overhead s or None, energy Wh, wasted Wh, evictions, the machine
of its last attempt or None, submission time or None)."""


def _opened(submit: float | None) -> list[Any]:
    """A job's record while it lives: submit time, energy Wh, wasted Wh, evictions, machine."""
    return [submit, 0.0, 0.0, 0, None]


def restored(state: dict[str, Any]) -> tuple[dict[str, list[Any]], list[Ended]]:
    """A snapshot's open and ended jobs; an older daemon kept no machine or submission (None)."""
    opened = {job: [*v, None][:5] for job, v in state["open"].items()}
    return opened, [(*row, None, None)[:9] for row in state["ended"]]


class ArmBook:
    def __init__(self, percent: float, keep_s: float) -> None:
        self.percent = percent
        self.keep_s = keep_s
        self.open: dict[str, list[Any]] = {}
        """Job id -> [submit time or None, energy Wh, wasted Wh, evictions, last machine or None]
        while it lives."""
        self.ended: deque[Ended] = deque()
        self.totals = {arm: dict.fromkeys(TOTALS, 0.0) for arm in ARMS}

    def observe(self, event: Event) -> None:
        """Account one event (only job events matter)."""
        if isinstance(event, JobQueued):
            self.open.setdefault(event.job_id, _opened(event.time))  # a re-queue keeps it
        elif isinstance(event, AttemptEnded):
            self._attempt(event)
        elif isinstance(event, JobRemoved) and event.job_id in self.open:
            self._end(event.time, event.job_id, None)

    def _attempt(self, e: AttemptEnded) -> None:
        job = self.open.setdefault(e.job_id, _opened(None))
        job[4] = e.machine
        seconds = max(e.time - e.started, 0.0)
        wh = seconds * e.active_watts / 3600.0
        job[1] += wh
        totals = self.totals[arm_of(e.job_id, self.percent)]
        totals["energy_wh"] += wh
        if e.outcome is AttemptOutcome.COMPLETED:
            self._end(e.time, e.job_id, e.started)
            return
        job[2] += wh
        totals["wasted_wh"] += wh
        totals["wasted_hours"] += seconds / 3600.0
        if e.outcome in EVICTED:
            job[3] += 1
            totals["evictions"] += 1
        elif e.outcome is AttemptOutcome.REMOVED:
            self._end(e.time, e.job_id, None)

    def _end(self, t: float, job_id: str, started: float | None) -> None:
        """The job left: completed (its last attempt ``started`` then) or removed."""
        submit, energy, wasted, evictions, machine = self.open.pop(job_id)
        arm = arm_of(job_id, self.percent)
        totals = self.totals[arm]
        completed = started is not None
        overhead = None if started is None or submit is None else max(started - submit, 0.0)
        totals["completed" if completed else "removed"] += 1
        if overhead is not None:
            totals["overhead_s"] += overhead
            totals["overhead_jobs"] += 1
        self.ended.append((t, arm, completed, overhead, energy, wasted, evictions, machine, submit))
        while self.ended and self.ended[0][0] < t - self.keep_s:
            self.ended.popleft()

    def overheads(self, since: float) -> dict[str, list[float]]:
        """Per arm, the overheads of jobs completed at or after ``since``."""
        out: dict[str, list[float]] = {arm: [] for arm in ARMS}
        for t, arm, completed, overhead, *_ in reversed(self.ended):
            if t < since:
                break
            if completed and overhead is not None:
                out[arm].append(overhead)
        return out

    def state_dict(self) -> dict[str, Any]:
        return {
            "open": self.open,
            "ended": list(self.ended),
            "totals": self.totals,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore a snapshot's book (each ended job keeps the arm it was counted in)."""
        self.open, ended = restored(state)
        self.ended = deque(ended)
        self.totals = {arm: dict(state["totals"][arm]) for arm in ARMS}
