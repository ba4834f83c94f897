"""A live advisor's journal (``advisor.condor.journal``) as the trace files ``replay`` reads:
its machines as an inventory, owner logins as sessions, submissions as jobs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from advisor.condor.journal import JOURNAL_DIR
from advisor.lab.journal_read import PRIVATE, read_events, read_machines
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
    OwnerSessionEnded,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineInfo
from simulator.trace_model import (
    PARTITIONABLE,
    SINGLE,
    Cluster,
    Inventory,
    Jobs,
    MachineSpec,
    OpeningHours,
    OwnerSessions,
)
from simulator.traces import TraceError, write_inventory, write_jobs, write_owner_sessions


@dataclass
class JobRecord:
    submit: float
    user: str = "unknown"
    runtime: float = float("inf")
    removed: float | None = None
    cpus: int = 1
    held: float | None = None
    """When its last attempt ended in a hold (none since): a removal then ends it no later."""


@dataclass
class TraceBuilder:
    """Folds the journal's events into sessions and jobs; ``end`` closes what is still open."""

    sessions: list[tuple[float, str, float]] = field(default_factory=list)
    open_sessions: dict[str, float] = field(default_factory=dict)
    jobs: dict[str, JobRecord] = field(default_factory=dict)
    end: float = 0.0

    def feed(self, events: Iterable[Event]) -> None:
        for e in events:
            self.end = max(self.end, e.time)
            if isinstance(e, OwnerSessionStarted):
                self.open_sessions.setdefault(e.machine, e.time)
            elif isinstance(e, OwnerSessionEnded) and e.machine in self.open_sessions:
                self.sessions.append((self.open_sessions.pop(e.machine), e.machine, e.time))
            elif isinstance(e, JobQueued):
                self.jobs.setdefault(e.job_id, JobRecord(e.time, e.user, cpus=e.cpus))
            elif isinstance(e, AttemptStarted):
                self.jobs.setdefault(e.job_id, JobRecord(e.time)).held = None
            elif isinstance(e, AttemptEnded):
                job = self.jobs.setdefault(e.job_id, JobRecord(e.started))
                if e.outcome is AttemptOutcome.COMPLETED:
                    job.runtime = max(e.time - e.started, 0.0)  # clocks skew
                elif e.outcome is AttemptOutcome.REMOVED:
                    job.removed = e.time
                elif e.outcome is AttemptOutcome.HELD:
                    job.held = e.time
            elif isinstance(e, JobRemoved) and e.job_id in self.jobs:
                job = self.jobs[e.job_id]  # held till then, it ran no more after the hold
                job.removed = e.time if job.held is None else min(job.held, e.time)

    def owner_sessions(self, index: Mapping[str, int]) -> OwnerSessions:
        rows = [*self.sessions, *((t, m, self.end) for m, t in self.open_sessions.items())]
        rows = sorted(r for r in rows if r[1] in index)
        return OwnerSessions(
            login=np.array([r[0] for r in rows], dtype=float),
            machine=np.array([index[r[1]] for r in rows], dtype=np.int32),
            logout=np.array([r[2] for r in rows], dtype=float),
        )

    def still_open(self) -> list[str]:
        """Jobs still queued or running at the journal's end: neither completed nor removed."""
        return [j for j, r in self.jobs.items() if not np.isfinite(r.runtime) and not r.removed]

    def job_table(self) -> Jobs:
        """The jobs that completed, and those their user removed (never finishing, removed
        then). Those still open at the end are left out: their run time is not known yet, and
        a removal at the end would count their runs as wasted by a removal nobody made."""
        left_out = set(self.still_open())
        ids = sorted((j for j in self.jobs if j not in left_out), key=lambda j: self.jobs[j].submit)
        recs = [self.jobs[j] for j in ids]
        remove = [np.inf if np.isfinite(r.runtime) else r.removed for r in recs]
        return Jobs(
            job_id=ids,
            user=[r.user for r in recs],
            submit=np.array([r.submit for r in recs], dtype=float),
            runtime=np.array([r.runtime for r in recs], dtype=float),
            remove=np.array(remove, dtype=float),
            cpus=np.array([r.cpus for r in recs], dtype=np.int64),
        )


def spec_of(m: MachineInfo) -> MachineSpec:
    """A machine that runs several jobs at once (a partitionable slot's cores, or static slots:
    the replay's nearest model) is partitionable with as many cores (docs/slots.md)."""
    slots = PARTITIONABLE if m.jobs_at_once > 1 else SINGLE
    watts = m.active_watts, m.idle_watts, m.sleep_watts
    return MachineSpec(m.name, m.cluster, m.mtype, m.jobs_at_once, *watts, slots=slots)


def inventory_of(machines: Mapping[str, MachineInfo]) -> Inventory:
    """Clusters open all the time: a live pool's opening hours are in its owners' sessions."""
    clusters = {m.cluster: Cluster(m.cluster, OpeningHours.always()) for m in machines.values()}
    specs = [spec_of(m) for m in sorted(machines.values(), key=lambda m: m.name)]
    return Inventory(clusters=clusters, machines=specs)


def _why_no_journal(state: Path) -> str:
    """What is wrong with a ``--state`` that holds no journal, and what to give instead."""
    if not state.exists():
        return "no such directory; give the state.directory of an advisor"
    if not state.is_dir():
        return "is a file; give the state.directory of an advisor (a directory)"
    if (state / JOURNAL_DIR).is_dir():
        return (
            f"its {JOURNAL_DIR} has no machines.json yet: the advisor has not seen the "
            "collector answer; export once it has"
        )
    return (
        f"no {JOURNAL_DIR}/machines.json; point --state at the state.directory of an advisor "
        "that observed a condor pool (pool.kind: condor, pool.journal: true)"
    )


def export_trace(state: Path, out: Path) -> tuple[int, int, int, int]:
    """Write ``machines.yaml``, ``owners.csv`` and ``jobs.csv`` from the journal in ``state``
    into ``out``; the numbers of machines, owner sessions and jobs written, and of the jobs
    left out (still queued or running at the journal's end)."""
    try:
        journaled = (state / JOURNAL_DIR / "machines.json").exists()
    except PermissionError as exc:  # the state directory is the advisor's own, 0700
        raise TraceError(state, None, None, PRIVATE, str(exc)) from exc
    if not journaled:
        raise FileNotFoundError(f"{state}: {_why_no_journal(state)}")
    machines = read_machines(state)
    builder = TraceBuilder()
    builder.feed(read_events(state))
    inventory = inventory_of(machines)
    out.mkdir(parents=True, exist_ok=True)
    write_inventory(inventory, out / "machines.yaml")
    sessions = builder.owner_sessions(inventory.index())
    write_owner_sessions(sessions, inventory, out / "owners.csv")
    jobs = builder.job_table()
    write_jobs(jobs, out / "jobs.csv")
    return len(inventory.machines), len(sessions), len(jobs), len(builder.still_open())
