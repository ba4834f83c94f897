"""``CondorPoolSource``: the daemon's ``PoolSource`` for a live pool (collector + schedds).

Each poll: one projected startd query (owner sessions, power, candidates, inventory), then per
schedd the epoch ads written since the cursor (attempt outcomes; each goes to the schedd that
ran it, epoch_owners.py), the idle/running queue (new jobs, starts, the idle queue by class)
and, when idle jobs left it, the history of their removals, then the optional event log, whose
reports of what a schedd reported too are dropped (reported_once.py). Each schedd's jobs are
named ``cluster.proc@schedd``, since every schedd numbers its clusters from 1
(plugins/contract/job_ids.py). A daemon that does not answer is skipped with backoff and the
observation says ``healthy=False``; the daemon then lets advice expire. Everything observed is
appended to the journal for ``trace export``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from advisor.condor.epoch_owners import EpochOwners
from advisor.condor.epochs import EPOCH_PROJECTION, attempt_events, epoch_key
from advisor.condor.event_log import EventLogFollower
from advisor.condor.job_queue import QUEUE_CONSTRAINT, QUEUE_PROJECTION, QueueTracker, submitted
from advisor.condor.journal import Journal
from advisor.condor.machine_tracker import MachineTracker
from advisor.condor.removals import REMOVAL_PROJECTION, removal_query, settle
from advisor.condor.reported_once import ReportedOnce
from advisor.condor.retry import Backoff
from advisor.condor.startd_ads import SlotAd, group_by_machine
from advisor.ports import Observation
from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.events import AttemptEnded, AttemptStarted, Event, JobQueued, JobRemoved
from plugins.contract.job_ids import on_schedd
from plugins.contract.policy import MachineInfo, PoolView

Inventory = Callable[[str, Sequence[SlotAd]], MachineInfo]


EPOCH_REREAD_S = 120.0
"""How far behind the newest epoch ad each poll reads again. Concurrent shadows append epoch
ads out of ``EpochWriteDate`` order (each stamps its time, then waits for the file), so an ad
may land after one written later; ads inside the window are told apart by identity."""


def on_schedd_events(events: list[Event], schedd: str) -> list[Event]:
    """``events`` with their jobs named on ``schedd`` (plugins/contract/job_ids.py); as they
    are where the schedd is not known."""
    if not schedd:
        return events
    return [
        replace(e, job_id=on_schedd(e.job_id, schedd))
        if isinstance(e, JobQueued | JobRemoved | AttemptStarted | AttemptEnded)
        else e
        for e in events
    ]


@dataclass
class ScheddReader:
    """One schedd: epochs since ``cursor`` (newest write time, ids seen within the re-read
    window) and its queue."""

    name: str
    connect: Callable[[], Any]
    backoff: Backoff
    cursor_time: float = 0.0
    seen: dict[str, float] = field(default_factory=dict)
    """Identity -> write time of every epoch ad read within ``EPOCH_REREAD_S`` of the cursor."""
    queue: QueueTracker = field(default_factory=QueueTracker)

    def __post_init__(self) -> None:
        self.history_backoff = Backoff(f"{self.backoff.name} history")

    def epochs(self, now: float) -> list[Mapping[str, Any]] | None:
        horizon = self.cursor_time - EPOCH_REREAD_S
        since = f"EpochWriteDate < {int(horizon)}" if self.cursor_time else None
        ads = self.backoff.call(
            lambda: self.connect().jobEpochHistory(projection=list(EPOCH_PROJECTION), since=since),
            now,
        )
        if ads is None:
            return None
        keyed = sorted(  # (by key alone: two ads of one attempt written at one second tie)
            ((k, ad) for ad in ads if (k := epoch_key(ad)) is not None), key=lambda pair: pair[0]
        )
        fresh = list({ident: ad for (_, ident), ad in keyed if ident not in self.seen}.values())
        self.seen.update((ident, t) for (t, ident), _ in keyed)
        if keyed:
            self.cursor_time = max(self.cursor_time, keyed[-1][0][0])
        horizon = self.cursor_time - EPOCH_REREAD_S
        self.seen = {ident: t for ident, t in self.seen.items() if t >= horizon}
        return fresh

    def jobs(self, now: float) -> list[Mapping[str, Any]] | None:
        return self.backoff.call(
            lambda: self.connect().query(QUEUE_CONSTRAINT, list(QUEUE_PROJECTION)), now
        )

    def removals(self, now: float) -> list[Event]:
        """``JobRemoved`` of the idle or held jobs that left the queue, once their history records
        appear. Best effort, with its own backoff: a history that does not answer costs
        removals only (the policies forget a wait after a day), never the poll."""
        if not self.queue.left:
            return []
        constraint, since = removal_query(self.queue.left)
        projection = list(REMOVAL_PROJECTION)
        ads = self.history_backoff.call(
            lambda: self.connect().history(constraint, projection, since=since), now
        )
        events, self.queue.left = settle(ads or [], self.queue.left, now)
        return events

    def state(self) -> dict[str, Any]:
        return {
            "cursor_time": self.cursor_time,
            "seen": sorted(self.seen.items()),
            "queue": self.queue.state(),
        }

    def load(self, state: Mapping[str, Any]) -> None:
        self.cursor_time = float(state.get("cursor_time", 0.0))
        self.seen = {ident: float(t) for ident, t in state.get("seen", [])}
        self.seen.update((ident, self.cursor_time) for ident in state.get("cursor_ids", []))
        # Saved before identities named their schedd: the same ads, read again, now carry it.
        self.seen.update({f"{self.name}#{i}": t for i, t in self.seen.items() if "#" not in i})
        self.queue.load(state.get("queue", {}))


@dataclass
class CondorPoolSource:
    query_startds: Callable[[], list[Mapping[str, Any]]]
    schedds: list[ScheddReader]
    inventory: Inventory
    collector_backoff: Backoff
    tracker: MachineTracker = field(default_factory=MachineTracker)
    event_log: EventLogFollower | None = None
    journal: Journal | None = None
    machines: dict[str, MachineInfo] = field(default_factory=dict)
    slot_names: dict[str, list[str]] = field(default_factory=dict)
    last_view: PoolView = field(default_factory=lambda: PoolView([], [0] * PRIOR_HOURS_CLASSES))
    discover: Callable[[], list[ScheddReader]] | None = None
    """Finds every schedd through the collector when none were configured (retried until then)."""
    restored: dict[str, Any] = field(default_factory=dict)
    """Schedd cursors from ``restore``, for schedds discovered later."""
    event_log_schedd: str | None = None
    """The schedd whose jobs the event log records (None: the pool's only schedd)."""
    warned_log_schedd: bool = False
    once: ReportedOnce = field(default_factory=ReportedOnce)
    """With an event log, what both it and the schedds report is passed on once."""
    owners: EpochOwners = field(default_factory=EpochOwners)
    """Each epoch ad to the schedd that ran its attempt (two schedds on a host share a file)."""

    def poll(self, now: float) -> Observation:
        events: list[Event] = []
        healthy = True
        if self.discover is not None and not self.schedds:
            self.schedds = self.collector_backoff.call(self.discover, now) or []
            for schedd in self.schedds:
                schedd.load(self.restored.get(schedd.name, {}))
        ads = self.collector_backoff.call(self.query_startds, now)
        views = self.last_view.machines
        if ads is None:
            healthy = False
        else:
            grouped = group_by_machine(ads)
            self.slot_names = {m: [s.name for s in slots] for m, slots in grouped.items()}
            grown = [m for m in grouped if m not in self.machines]
            for m in grown:
                self.machines[m] = self.inventory(m, grouped[m])
            if grown and self.journal is not None:
                self.journal.save_machines(self.machines)
            events += self.tracker.update(grouped, now)
            views = self.tracker.views(grouped)
        by_class = [0] * PRIOR_HOURS_CLASSES
        by_cpus: dict[int, int] = {}
        new_jobs: list[str] = []
        read = {schedd.name: schedd.epochs(now) for schedd in self.schedds}
        routed = self.owners.route(read)
        for schedd in self.schedds:
            answered = read[schedd.name] is not None
            schedd_events, counts = self._schedd(schedd, routed[schedd.name], answered, now)
            schedd_events = on_schedd_events(schedd_events, schedd.name)
            if counts is None:
                healthy = False
                counts = [0] * PRIOR_HOURS_CLASSES
            else:
                for cpus, n in schedd.queue.by_cpus.items():
                    by_cpus[cpus] = by_cpus.get(cpus, 0) + n
            by_class = [a + b for a, b in zip(by_class, counts, strict=True)]
            events += schedd_events
            new_jobs += submitted(schedd_events)
        if self.event_log is not None and (self.event_log_schedd or self.schedds):
            # (while no schedd is found, the log's jobs wait in it rather than go out unnamed)
            logged = on_schedd_events(self.event_log.read(), self.log_schedd())
            events = self.once.fresh(events, "schedd") + self.once.fresh(logged, "event log")
            self.once.forget()
        events.sort(key=lambda e: e.time)
        if self.journal is not None:
            self.journal.append(events, now)
        self.last_view = PoolView(views, by_class, new_jobs, by_cpus)
        return Observation(events, self.last_view, dict(self.machines), healthy)

    def log_schedd(self) -> str:
        """Whose jobs the event log records: the named schedd, else the only one ("": not
        known, its job ids stay bare, and a warning says so once)."""
        if self.event_log_schedd or len(self.schedds) == 1:
            return self.event_log_schedd or self.schedds[0].name
        if self.schedds and not self.warned_log_schedd:
            self.warned_log_schedd = True
            logging.getLogger("htcondor_advisor.pool").warning(
                "pool.event_log names no schedd and the pool has %d: its jobs cannot be told "
                "from theirs; set pool.event_log_schedd to the Name of the schedd that writes "
                "it (condor_status -schedd -af Name)",
                len(self.schedds),
            )
        return ""

    def understated(self) -> dict[str, dict[str, int]]:
        """Per schedd, idle jobs whose prior-hours class the pool's expression misses."""
        return {s.name: dict(s.queue.understated) for s in self.schedds}

    def _schedd(
        self, schedd: ScheddReader, epochs: list[Mapping[str, Any]], answered: bool, now: float
    ) -> tuple[list[Event], list[int] | None]:
        """The schedd's events from the epoch ads of its attempts (some may come from another
        schedd's history, so they count even when its own did not answer), its queue and its
        removals; no counts when its history did not answer."""
        events: list[Event] = []
        watts = {m: info.active_watts for m, info in self.machines.items()}
        for ad in epochs:
            for event in attempt_events(ad, watts):
                if isinstance(event, AttemptStarted):
                    if schedd.queue.attempt_ended(event.job_id, event.time):
                        continue
                elif isinstance(event, AttemptEnded):
                    schedd.queue.record_attempt(event.job_id, event.time - event.started)
                events.append(event)
        if not answered:
            return events, None
        jobs = schedd.jobs(now)
        if jobs is None:
            return events, None
        queue_events, counts = schedd.queue.update(jobs, now)
        return events + queue_events + schedd.removals(now), counts

    def cursor(self) -> dict[str, Any]:
        return {
            "machines": self.tracker.state(),
            "schedds": {**self.restored, **{s.name: s.state() for s in self.schedds}},
            "event_log": self.event_log.state() if self.event_log else None,
            "journal_bytes": self.journal.size() if self.journal else None,
        }

    def restore(self, cursor: Mapping[str, Any]) -> None:
        self.tracker.load(cursor.get("machines", {}))
        self.restored = dict(cursor.get("schedds", {}))
        for schedd in self.schedds:
            schedd.load(self.restored.get(schedd.name, {}))
        if self.event_log is not None and cursor.get("event_log"):
            self.event_log.load(cursor["event_log"])
