"""The schedd's queue: new and re-queued idle jobs (``JobQueued``), running attempts as they
start (``AttemptStarted``), the idle or held jobs that left it (``left``, for removals.py), and
the idle queue by prior-hours class for the ``PoolView``.

A job's class is its longest earlier attempt in whole hours (paper 000 sec. 4), from the epochs
seen so far, else ``LastRemoteWallClockTime``. The pool's own expression
(``ADVISOR_PRIOR_HOURS``) sees only ``AdvisorPriorHours``, else the last attempt: an idle job
whose class the pool would get wrong is listed in ``understated`` for the schedd sink to edit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.condor.core_shares import Draw
from advisor.condor.epochs import job_id, machine_of, unix_time
from advisor.condor.lost_attempts import LostAttempts
from advisor.condor.removals import Left
from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, Event, JobQueued

QUEUE_PROJECTION = (
    "ClusterId",
    "ProcId",
    "Owner",
    "QDate",
    "JobStatus",
    "NumJobStarts",
    "LastRemoteWallClockTime",
    "RemoteHost",
    "JobCurrentStartDate",
    "EnteredCurrentStatus",
    "AllowedExecuteDuration",
    "AdvisorPriorHours",
    "RequestCpus",
    "JobMaterializeDate",
)
QUEUE_CONSTRAINT = (
    "(JobStatus == 1 || JobStatus == 2 || JobStatus == 3 || JobStatus == 5)"
    " && JobUniverse =!= 7 && JobUniverse =!= 9 && JobUniverse =!= 12"
)
"""Idle, running, removed and held jobs that run in a slot: not scheduler (DAGMan), grid or
local universe jobs, which no machine of the pool runs; counted waiting, they would wake
sleeping machines and wait for ever in the policies' and the arms' books."""
IDLE, RUNNING, REMOVED, HELD = 1, 2, 3, 5
STALE_S = 86400.0
"""A reported start whose job left the queue without an epoch ad is forgotten after a day."""


def hours_class(seconds: float) -> int:
    return min(int(seconds // 3600), PRIOR_HOURS_CLASSES - 1)


def _number(ad: Mapping[str, Any], attr: str) -> float | None:
    value = ad.get(attr)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def pool_prior_class(ad: Mapping[str, Any]) -> int:
    """The class ``ADVISOR_PRIOR_HOURS`` gives the job (deploy/common/40), the pool's fact: the
    advisor's ``AdvisorPriorHours`` if set, else the last attempt's wall time."""
    published = _number(ad, "AdvisorPriorHours")
    if published is not None:
        return min(max(int(published), 0), PRIOR_HOURS_CLASSES - 1)
    last = _number(ad, "LastRemoteWallClockTime")
    return hours_class(last) if last is not None and last > 0 else 0


def materialized(ad: Mapping[str, Any], attr: str) -> float | None:
    """``attr`` (QDate, EnteredCurrentStatus) of the job, or when it was materialized if later:
    a late-materialized job (a job factory, ``max_materialize``) inherits both of its cluster's
    submission, as HTCondor's own ``JobInitialWaitDuration`` knows (baseshadow.cpp)."""
    since, made = unix_time(ad.get(attr)), unix_time(ad.get("JobMaterializeDate"))
    return max(since, made) if since is not None and made is not None else since


def submitted(events: Iterable[Event]) -> list[str]:
    """The jobs queued for the first time among ``events`` (``PoolView.new_jobs``): a job idle
    again after an eviction or a hold is not new, as in a replay."""
    return [e.job_id for e in events if isinstance(e, JobQueued) and not e.prior_attempts]


def request_cpus(ad: Mapping[str, Any]) -> int:
    """The cores the job requests; 1 (HTCondor's default) where ``RequestCpus`` is not a whole
    number yet, e.g. an expression the negotiator evaluates against each machine."""
    value = ad.get("RequestCpus")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def limit(ad: Mapping[str, Any]) -> float | None:
    """The job's runtime bound, ``allowed_execute_duration`` in its submit file (the schedd
    holds a job that runs longer): the estimate a live pool gives queue-ordering policies."""
    value = ad.get("AllowedExecuteDuration")
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return float(value)


@dataclass
class QueueTracker:
    """What was already reported, so each queueing and each start is reported once."""

    idle: dict[str, int] = field(default_factory=dict)
    """Idle jobs at the last update, with their starts (``NumJobStarts``) then."""
    held: dict[str, int] = field(default_factory=dict)
    """Held jobs at the last update, with their starts then: a removal may come any time."""
    left: Left = field(default_factory=dict)
    """Idle or held jobs that left the queue, until their history record is read
    (removals.py)."""
    removed: list[Mapping[str, Any]] = field(default_factory=list)
    """The removed jobs still in the queue at the last update (``LeaveJobInQueue``, or a shadow
    still ending): the record of a removal that the history does not have yet."""
    polled: float = 0.0
    running: dict[str, float] = field(default_factory=dict)
    """The start of each job's latest attempt reported (from the queue or an epoch ad)."""
    ended: set[str] = field(default_factory=set)
    """Jobs whose latest attempt's epoch ad was read: a 25 schedd writes it while the queue
    still lists the job running, and that start must not be reported again."""
    lost: LostAttempts = field(default_factory=LostAttempts)
    """Attempts the queue reported started, until an epoch ad or their loss ends them."""
    longest: dict[str, float] = field(default_factory=dict)
    understated: dict[str, int] = field(default_factory=dict)
    """Idle jobs whose longest attempt (whole hours) is a class the pool's expression misses."""
    by_cpus: dict[int, int] = field(default_factory=dict)
    """The idle jobs of the last update by the cores they request (``PoolView``)."""
    counts: list[int] = field(default_factory=lambda: [0] * PRIOR_HOURS_CLASSES)
    """The idle jobs of the last update per prior-hours class (``PoolView``)."""

    def record_attempt(self, jid: str, seconds: float) -> None:
        self.longest[jid] = max(self.longest.get(jid, 0.0), seconds)

    def prior_s(self, jid: str, ad: Mapping[str, Any]) -> float:
        last = ad.get("LastRemoteWallClockTime")
        last_s = float(last) if isinstance(last, int | float) and last > 0 else 0.0
        return max(self.longest.get(jid, 0.0), last_s)

    def queued_unseen(self, jid: str, ad: Mapping[str, Any]) -> list[Event]:
        """The submission of a job that started on its first attempt before any poll saw it
        idle (submitted since the last one; ``ad`` is its queue ad or its epoch ad): without
        it, its wait would be unknown, and the control group would count only the jobs that
        waited through a poll (docs/control-group.md)."""
        submitted = materialized(ad, "QDate")
        starts = ad.get("NumJobStarts")
        first = not isinstance(starts, int) or starts <= 1
        seen = jid in self.idle or jid in self.held  # (a clock that differs from the schedd's)
        if not self.polled or seen or not first or submitted is None or submitted <= self.polled:
            return []
        owner = str(ad.get("Owner") or "unknown")
        return [
            JobQueued(submitted, jid, owner, expected_runtime_s=limit(ad), cpus=request_cpus(ad))
        ]

    def update(
        self, ads: Iterable[Mapping[str, Any]], now: float, draw: Draw | None = None
    ) -> tuple[list[Event], list[int]]:
        """Events since the last poll and the idle jobs per prior-hours class; ``draw`` gives the
        power of the attempts lost without an epoch ad (core_shares.py; one core each)."""
        events: list[Event] = []
        by_class = [0] * PRIOR_HOURS_CLASSES
        idle_now: dict[str, int] = {}
        held_now: dict[str, int] = {}
        queued: set[str] = set()
        self.understated, self.by_cpus = {}, {}
        self.removed = []
        for ad in ads:
            jid = job_id(ad)
            status = ad.get("JobStatus")
            if jid is None:
                continue
            if status == REMOVED:  # (gone from the queue for the policies)
                self.removed.append(ad)
                continue
            queued.add(jid)
            starts = ad.get("NumJobStarts")
            prior_n = int(starts) if isinstance(starts, int) else 0
            if status in (IDLE, HELD):
                self.lost.stopped(jid, unix_time(ad.get("EnteredCurrentStatus")) or now)
            if status == HELD:
                held_now[jid] = prior_n
            elif status == IDLE:
                idle_now[jid] = prior_n
                cpus = request_cpus(ad)
                self.by_cpus[cpus] = self.by_cpus.get(cpus, 0) + 1
                prior = self.prior_s(jid, ad)
                by_class[hours_class(prior)] += 1
                if hours_class(prior) != pool_prior_class(ad):
                    self.understated[jid] = int(prior // 3600)
                if jid not in self.idle:
                    t = (
                        materialized(ad, "EnteredCurrentStatus")
                        or unix_time(ad.get("QDate"))
                        or now
                    )
                    if self.polled and jid not in self.held and jid not in self.running:
                        t = max(t, self.polled)  # new since the last poll, whatever its ad says
                    owner = str(ad.get("Owner") or "unknown")
                    events.append(
                        JobQueued(
                            t, jid, owner, prior_n, prior, expected_runtime_s=limit(ad), cpus=cpus
                        )
                    )
            elif status == RUNNING:
                machine = machine_of(ad.get("RemoteHost"))
                started = unix_time(ad.get("JobCurrentStartDate"))
                if machine is None or started is None:
                    continue
                if self.running.get(jid) != started:
                    events += self.queued_unseen(jid, ad)
                    self.running[jid] = started
                    self.ended.discard(jid)
                    self.lost.started(jid, started, machine)
                    events.append(AttemptStarted(started, jid, machine))
        seen = self.polled or now  # (a cursor of an earlier version has no poll time)
        waited = self.idle | self.held
        left = {jid: (n, seen) for jid, n in waited.items() if jid not in queued}
        self.left = {jid: v for jid, v in self.left.items() if jid not in queued} | left
        self.idle, self.held, self.polled = idle_now, held_now, now
        for jid in [j for j in self.longest if j not in queued]:
            del self.longest[jid]
        gone = [
            j
            for j, t in self.running.items()
            if j not in queued and (j in self.ended or now - t > STALE_S)
        ]
        for jid in gone:
            del self.running[jid]
            self.ended.discard(jid)
        for jid in [j for j in self.lost.running if j not in queued]:
            self.lost.gone(jid)
        for jid, machine, started, ended in self.lost.due(now):
            outcome = AttemptOutcome.EVICTED_REBOOT
            events.append(
                AttemptEnded(
                    ended,
                    jid,
                    machine,
                    outcome,
                    started,
                    draw(machine, started, ended, 1) if draw else 0.0,
                )
            )
        self.counts = by_class
        return events, by_class

    def attempt_ended(self, jid: str, started: float) -> bool:
        """Whether the start of this attempt, whose epoch ad was read, was reported already."""
        latest = self.running.get(jid)
        if latest is None or started >= latest:  # (not an earlier attempt's ad, read late)
            self.running[jid] = started
            self.ended.add(jid)
        return latest == started

    def end_reported(self, jid: str, started: float) -> bool:
        """Whether the end an epoch ad reports was reported already, as lost."""
        return self.lost.ended(jid, started)

    def state(self) -> dict[str, Any]:
        return {
            "lost": self.lost.state(),
            "idle": self.idle,
            "held": self.held,
            "polled": self.polled,
            "left": {jid: list(v) for jid, v in self.left.items()},
            "running": self.running,
            "ended": sorted(self.ended),
            "longest": self.longest,
        }

    def load(self, state: Mapping[str, Any]) -> None:
        """Also a cursor of an earlier version, whose idle jobs had no starts: -1, never equal
        to a history ad's, so their removals are not guessed."""
        idle = state.get("idle", {})
        self.idle = {jid: -1 for jid in idle} if isinstance(idle, list) else dict(idle)
        self.held = dict(state.get("held", {}))
        self.polled = float(state.get("polled", 0.0))
        self.left = {jid: (int(n), float(t)) for jid, (n, t) in state.get("left", {}).items()}
        self.running = {k: float(v) for k, v in state.get("running", {}).items()}
        self.ended = set(state.get("ended", []))
        self.longest = {k: float(v) for k, v in state.get("longest", {}).items()}
        self.lost = LostAttempts()
        self.lost.load(state.get("lost", {}))
