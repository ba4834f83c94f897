"""Each job event once, when the daemon follows a job event log beside the schedds.

Both report the same submissions, starts, ends and removals, to the second (docs/live-daemon.md,
"A removal is reported as in a replay"), and a policy that saw them twice would count every
attempt twice. The first report of an event wins; within a poll the schedds' come first, with
their vacate reasons and cores. Kept for a day of event time, in memory only: after a restart an
event both sources had already reported is not reported again, as each resumes from its cursor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from plugins.contract.clock import DAY
from plugins.contract.events import AttemptEnded, AttemptStarted, Event, JobQueued, JobRemoved

Key = tuple[str, str, float]


def key_of(event: Event) -> Key | None:
    """What makes two reports one event (None: an event only one source gives)."""
    if isinstance(event, AttemptStarted):
        return ("started", event.job_id, event.time)
    if isinstance(event, AttemptEnded):
        return ("ended", event.job_id, event.started)
    if isinstance(event, JobRemoved):
        return ("removed", event.job_id, 0.0)
    if isinstance(event, JobQueued):  # (a job idle again after a hold has a later time)
        return ("queued", event.job_id, event.time)
    return None


@dataclass
class ReportedOnce:
    seen: dict[Key, float] = field(default_factory=dict)
    """Each event's key and its time, for a day."""

    def fresh(self, events: Iterable[Event]) -> list[Event]:
        """``events`` in order, without those already reported."""
        out: list[Event] = []
        for event in events:
            key = key_of(event)
            if key is not None:
                if key in self.seen:
                    continue
                self.seen[key] = event.time
            out.append(event)
        newest = max(self.seen.values(), default=0.0)
        self.seen = {k: t for k, t in self.seen.items() if t > newest - DAY}
        return out
