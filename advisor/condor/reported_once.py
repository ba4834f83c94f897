"""Each job event once, when the daemon follows a job event log beside the schedds.

Both sources report the same submissions, attempts and removals, but not always to the same
second: the schedd dates a start when the shadow starts (``JobCurrentStartDate``), the log when
the job executes, after its input files came; each dates an end as it writes it. A policy that
saw both would count every attempt twice. So a report is dropped only when it matches one the
*other* source already gave, by what two reports of one attempt share and two attempts of one
job never do: attempts of a job never overlap, and their ends are a negotiation cycle apart.
A source's own reports are never merged, so a job only one source knows is reported as before.
Within a poll the schedds' reports come first and win, with their vacate reasons and cores.
Kept for a day of event time, in memory only: after a restart each source resumes from its
own cursor and reports nothing again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from plugins.contract.clock import DAY
from plugins.contract.events import AttemptEnded, AttemptStarted, Event, JobQueued, JobRemoved

SAME_S = 60.0
"""Two reports of one start (or one submission) are this close at most, the log's later."""
SAME_END_S = 10.0
"""Two reports of one end are this close at most."""


@dataclass
class Report:
    """One submission, attempt or removal, and which sources reported its start and end."""

    start: float
    end: float | None = None
    starts: set[str] = field(default_factory=set)
    ends: set[str] = field(default_factory=set)


@dataclass
class JobReports:
    attempts: list[Report] = field(default_factory=list)
    queued: list[Report] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)
    last: float = 0.0

    def started(self, t: float, source: str) -> bool:
        """Whether a start at ``t`` is new: not inside an attempt the other source gave."""
        for a in self.attempts:
            inside = a.start - SAME_S <= t and (a.end is None or t <= a.end + SAME_END_S)
            if source not in a.starts and inside:
                a.starts.add(source)
                return False
        self.attempts.append(Report(t, starts={source}))
        return True

    def ended(self, t: float, started: float, source: str) -> bool:
        """Whether an end at ``t`` is new; a new one closes the open attempt it belongs to."""
        for a in self.attempts:
            if source not in a.ends and a.end is not None and abs(a.end - t) <= SAME_END_S:
                a.ends.add(source)
                return False
        open_ = [a for a in self.attempts if a.end is None and a.start - SAME_S <= t]
        if open_:
            attempt = min(open_, key=lambda a: abs(a.start - started))
            attempt.end, attempt.ends = t, {source}
        else:
            self.attempts.append(Report(started, t, starts={source}, ends={source}))
        return True

    def queued_at(self, t: float, source: str) -> bool:
        """Whether a submission (or a requeue) at ``t`` is new."""
        for q in self.queued:
            if source not in q.starts and abs(q.start - t) <= SAME_S:
                q.starts.add(source)
                return False
        self.queued.append(Report(t, starts={source}))
        return True

    def fresh(self, event: Event, source: str) -> bool:
        self.last = max(self.last, event.time)
        if isinstance(event, AttemptStarted):
            return self.started(event.time, source)
        if isinstance(event, AttemptEnded):
            return self.ended(event.time, event.started, source)
        if isinstance(event, JobQueued):
            return self.queued_at(event.time, source)
        if isinstance(event, JobRemoved):
            new = not self.removed - {source}
            self.removed.add(source)
            return new
        return True


@dataclass
class ReportedOnce:
    jobs: dict[str, JobReports] = field(default_factory=dict)
    """What was reported of each job, for a day after its last report."""

    def fresh(self, events: Iterable[Event], source: str) -> list[Event]:
        """``events`` of ``source`` in order, without those the other source reported."""
        out: list[Event] = []
        for event in events:
            job = getattr(event, "job_id", None)
            if job is None or self.jobs.setdefault(job, JobReports()).fresh(event, source):
                out.append(event)
        return out

    def forget(self) -> None:
        """Drops jobs not reported for a day of event time."""
        newest = max((r.last for r in self.jobs.values()), default=0.0)
        self.jobs = {j: r for j, r in self.jobs.items() if r.last > newest - DAY}
