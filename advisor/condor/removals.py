"""Idle or held jobs that left a schedd's queue, kept until its history says whether their user
removed them (docs/live-daemon.md, "A removal is reported as in a replay").

A job seen idle or held and gone at a later poll was removed, or started and ended in between.
The schedd writes a job's history record once the job leaves the queue, which may be a poll
later than the queue stops showing it, so each job is asked about at every poll until its
record appears or ``PENDING_S`` has passed. A job removed but kept in the queue
(``LeaveJobInQueue``) has no record until it leaves: the queue's own ad says so (job_queue.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from advisor.condor.epochs import job_id, unix_time
from plugins.contract.events import Event, JobRemoved

REMOVED = 3
REMOVAL_PROJECTION = ("ClusterId", "ProcId", "JobStatus", "NumJobStarts", "EnteredCurrentStatus")
HISTORY_SLACK_S = 600.0
"""How far before a job was last seen the history is read (clocks and writes may lag)."""
PENDING_S = 600.0
"""How long a job that left the queue is asked about before it is forgotten."""

Left = dict[str, tuple[int, float]]
"""Per job that left the queue idle or held: its starts (``NumJobStarts``) then, and the time
of the last poll that saw it."""


WRITTEN_AT_ONCE = (
    'JobStatus == 4 && (LeaveJobInQueue =?= undefined || unparse(LeaveJobInQueue) == "false")'
)
"""A record written as its job completed. Records are appended as jobs leave the queue, but
carry no write time: a job kept there (``LeaveJobInQueue`` an expression, as for spooled jobs,
or true) is written when it leaves, days later, with its old status time; so is a kept removed
job that ``condor_rm -forcex`` lets go, whose flag is then false. A completed job whose flag is
a plain false (condor_submit's default) left at once (docs/live-daemon.md)."""


def removal_query(left: Left) -> tuple[str, str]:
    """The history constraint (the jobs' clusters) and the ``since`` expression that ends the
    read (records are read newest first) for the jobs of ``left``: the first record written at
    once, and before the oldest of them was last seen."""
    clusters = ", ".join(sorted({jid.split(".", 1)[0] for jid in left}, key=int))
    oldest = min(after for _, after in left.values())
    return (
        f"member(ClusterId, {{{clusters}}})",
        f"{WRITTEN_AT_ONCE} && CompletionDate < {int(oldest - HISTORY_SLACK_S)}",
    )


def settle(ads: Iterable[Mapping[str, Any]], left: Left, now: float) -> tuple[list[Event], Left]:
    """``JobRemoved`` for each job of ``left`` whose record says its user removed it without a
    start since it was last seen (one removed while running ends in its epoch ad instead), and
    the jobs still without a record and not yet forgotten."""
    events: list[Event] = []
    pending = dict(left)
    for ad in ads:
        jid = job_id(ad)
        if jid is None or jid not in pending:
            continue
        starts, _ = pending.pop(jid)
        if ad.get("JobStatus") == REMOVED and ad.get("NumJobStarts", 0) == starts:
            events.append(JobRemoved(unix_time(ad.get("EnteredCurrentStatus")) or now, jid))
    return events, {j: v for j, v in pending.items() if now - v[1] < PENDING_S}
