"""``CondorPoolSource``: the daemon's ``PoolSource`` for a live pool (collector + schedds).

Each poll: one projected startd query (owner sessions, power, candidates, inventory), then per
schedd the epoch ads written since the cursor (attempt outcomes; each goes to the schedd that
ran it, epoch_owners.py), the idle/running queue (new jobs, starts, the idle queue by class)
and, when idle jobs left it, the history of their removals, then the optional event log, whose
reports of what a schedd reported too are dropped (reported_once.py). Each schedd's jobs are
named ``cluster.proc@schedd``, since every schedd numbers its clusters from 1
(plugins/contract/job_ids.py). A daemon that does not answer is skipped with backoff. The
observation says ``healthy=False`` when the collector did not answer, or no schedd did: the
daemon then lets advice expire. With some schedds answering, those that did not are named in
``unanswered`` and their last known queue stands in for theirs; each is read on from its cursor
once it answers. Without ``pool.schedds``, the schedds are those the collector shows at each poll
(schedd_directory.py). Everything observed is appended to the journal for ``trace export``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from advisor.condor.core_shares import CoreShares
from advisor.condor.epoch_owners import EpochOwners
from advisor.condor.epochs import attempt_events
from advisor.condor.event_log import EventLogFollower
from advisor.condor.job_queue import submitted
from advisor.condor.journal import Journal
from advisor.condor.machine_tracker import MachineTracker
from advisor.condor.reported_once import ReportedOnce
from advisor.condor.retry import Backoff
from advisor.condor.schedd_directory import ScheddDirectory
from advisor.condor.schedd_reader import ScheddReader
from advisor.condor.startd_ads import SlotAd, group_by_machine
from advisor.ports import Observation
from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.events import AttemptEnded, AttemptStarted, Event, JobQueued, JobRemoved
from plugins.contract.job_ids import on_schedd
from plugins.contract.policy import MachineInfo, PoolView

Inventory = Callable[[str, Sequence[SlotAd]], MachineInfo]
COLLECTOR_SETTLES_S = 600.0
"""``pool.collector_settles_s``'s default: twice HTCondor's default ``UPDATE_INTERVAL`` and
``SCHEDD_INTERVAL`` (300 s), the longest a daemon waits to send its ad again."""


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


def merged_slots(slots: Sequence[SlotAd]) -> list[str]:
    """The slots the collector merge writes the advice into: static and partitionable ones,
    where the negotiator matches; not the dynamic slots carved from them (claimed, and on a
    large pool most of the ads: merging them would send every ad the startds send, each cycle)."""
    return [s.name for s in slots if s.jobs_at_once > 0]


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
    collector_started: Callable[[], float | None] | None = None
    """When the collector itself started (its ``DaemonStartTime``; None: not said)."""
    collector_settles_s: float = COLLECTOR_SETTLES_S
    """``pool.collector_settles_s``: how long a collector just started is taken to miss ads."""
    directory: ScheddDirectory | None = None
    """Without ``pool.schedds``: the schedds the collector shows, asked again at each poll."""
    event_log_schedd: str | None = None
    """The schedd whose jobs the event log records (None: the pool's only schedd)."""
    warned_log_schedd: bool = False
    once: ReportedOnce = field(default_factory=ReportedOnce)
    """With an event log, what both it and the schedds report is passed on once."""
    owners: EpochOwners = field(default_factory=EpochOwners)
    """Each epoch ad to the schedd that ran its attempt (two schedds on a host share a file)."""
    shares: CoreShares = field(default_factory=CoreShares)
    """The busy cores of each machine, for each attempt's share of its power."""

    def poll(self, now: float) -> Observation:
        events: list[Event] = []
        complete = self._collector_knows_all(now)
        if self.directory is not None:
            backoff = self.collector_backoff
            self.schedds = self.directory.update(self.schedds, backoff, now, complete)
        ads = self.collector_backoff.call(self.query_startds, now)
        views = self.last_view.machines
        if ads is not None:
            grouped = group_by_machine(ads)
            self.slot_names = {m: merged_slots(slots) for m, slots in grouped.items()}
            # each machine as the pool describes it now (cores after a reconfig, a room given
            # later): each attempt's share of its power follows it, and the host says when the
            # policy's description, learned when the machine joined, differs (host.join)
            now_described = {m: self.inventory(m, slots) for m, slots in grouped.items()}
            changed = [m for m, info in now_described.items() if self.machines.get(m) != info]
            self.machines.update(now_described)
            if changed and self.journal is not None:
                self.journal.save_machines(self.machines)
            events += self.tracker.update(grouped, now, complete)
            self.shares.update(grouped, now)
            views = self.tracker.views(grouped)
        by_class = [0] * PRIOR_HOURS_CLASSES
        by_cpus: dict[int, int] = {}
        new_jobs: list[str] = []
        unanswered: list[str] = []
        read = {schedd.name: schedd.epochs(now) for schedd in self.schedds}
        routed = self.owners.route(read)
        for schedd in self.schedds:
            answered = read[schedd.name] is not None
            schedd_events, counts = self._schedd(schedd, routed[schedd.name], answered, now)
            schedd_events = on_schedd_events(schedd_events, schedd.name)
            if counts is None:  # its last known queue stands in until it answers
                unanswered.append(schedd.name)
                counts = schedd.queue.counts
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
        no_schedd = bool(self.schedds) and len(unanswered) == len(self.schedds)
        healthy = ads is not None and not no_schedd
        return Observation(
            events, self.last_view, dict(self.machines), healthy, tuple(sorted(unanswered))
        )

    def _collector_knows_all(self, now: float) -> bool:
        """False while the collector is younger than ``collector_settles_s``: a collector keeps
        its ads in memory, so one that has just (re)started lists only the daemons that have
        sent their ads since, and a machine or schedd missing from it is not gone."""
        if self.collector_started is None:
            return True
        started = self.collector_backoff.call(self.collector_started, now)
        return started is None or now - started >= self.collector_settles_s

    def log_schedd(self) -> str:
        """Whose jobs the event log records: the named schedd, else the only one ever read
        ("": not known, its job ids stay bare, and a warning says so once)."""
        known = sorted({s.name for s in self.schedds} | set(self.left()))
        if self.event_log_schedd or len(known) == 1:
            return self.event_log_schedd or known[0]
        if known and not self.warned_log_schedd:
            self.warned_log_schedd = True
            logging.getLogger("htcondor_advisor.pool").warning(
                "pool.event_log names no schedd and the pool has %d: its jobs cannot be told "
                "from theirs; set pool.event_log_schedd to the Name of the schedd that writes "
                "it (condor_status -schedd -af Name)",
                len(known),
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
        draw = self.shares.drawing(self.machines)
        for ad in epochs:
            attempt = attempt_events(ad, draw)
            if attempt and schedd.queue.end_reported(attempt[0].job_id, attempt[0].time):
                continue  # (ended as lost already: its start and end were both reported)
            for event in attempt:
                if isinstance(event, AttemptStarted):
                    if schedd.queue.attempt_ended(event.job_id, event.time):
                        continue
                    events += schedd.queue.queued_unseen(event.job_id, ad)
                elif isinstance(event, AttemptEnded):
                    schedd.queue.record_attempt(event.job_id, event.time - event.started)
                events.append(event)
        if not answered:
            return events, None
        jobs = schedd.jobs(now)
        if jobs is None:
            return events, None
        queue_events, counts = schedd.queue.update(jobs, now, draw)
        return events + queue_events + schedd.removals(now), counts

    def left(self) -> dict[str, Any]:
        """The saved cursors of schedds not read now (not found yet, or gone)."""
        return dict(self.directory.cursors) if self.directory is not None else {}

    def cursor(self) -> dict[str, Any]:
        return {
            "machines": self.tracker.state(),
            "schedds": {**self.left(), **{s.name: s.state() for s in self.schedds}},
            "event_log": self.event_log.state() if self.event_log else None,
            "journal_bytes": self.journal.size() if self.journal else None,
        }

    def restore(self, cursor: Mapping[str, Any]) -> None:
        self.tracker.load(cursor.get("machines", {}))
        schedds = cursor.get("schedds", {})
        if self.directory is not None:
            self.directory.restore(schedds)
        for schedd in self.schedds:
            schedd.load(schedds.get(schedd.name, {}))
        if self.event_log is not None and cursor.get("event_log"):
            self.event_log.load(cursor["event_log"])
        written = cursor.get("journal_bytes")
        if self.journal is not None and isinstance(written, int):
            self.journal.cut_back(written)
