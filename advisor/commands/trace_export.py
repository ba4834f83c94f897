"""``trace export``: what a live advisor observed, as trace files ``replay`` reads.

Reads the condor source's journal in ``--state DIR`` and writes ``machines.yaml`` (inventory),
``owners.csv`` (owner sessions) and ``jobs.csv`` (submissions with the run time of the attempt that
completed) into ``--out DIR``, so an administrator can replay their own pool under other policies:
``htcondor-advisor replay --machines machines.yaml --owners owners.csv --jobs jobs.csv``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from advisor.condor.journal import JOURNAL_DIR, read_events, read_machines
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    OwnerSessionEnded,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineInfo
from simulator.trace_model import (
    Cluster,
    Inventory,
    Jobs,
    MachineSpec,
    OpeningHours,
    OwnerSessions,
)
from simulator.traces import write_inventory, write_jobs, write_owner_sessions


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("trace", help="trace files from a live advisor's observations")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    export = verbs.add_parser("export", help="write machines.yaml, owners.csv and jobs.csv")
    export.add_argument("--state", type=Path, required=True, help="the daemon's state directory")
    export.add_argument("--out", type=Path, required=True, help="directory for the trace files")
    export.set_defaults(handler=run)


@dataclass
class JobRecord:
    submit: float
    user: str = "unknown"
    runtime: float = float("inf")
    removed: float | None = None


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
                self.jobs.setdefault(e.job_id, JobRecord(e.time, e.user))
            elif isinstance(e, AttemptStarted):
                self.jobs.setdefault(e.job_id, JobRecord(e.time))
            elif isinstance(e, AttemptEnded):
                job = self.jobs.setdefault(e.job_id, JobRecord(e.started))
                if e.outcome is AttemptOutcome.COMPLETED:
                    job.runtime = e.time - e.started
                elif e.outcome is AttemptOutcome.REMOVED:
                    job.removed = e.time

    def owner_sessions(self, index: Mapping[str, int]) -> OwnerSessions:
        rows = [*self.sessions, *((t, m, self.end) for m, t in self.open_sessions.items())]
        rows = sorted(r for r in rows if r[1] in index)
        return OwnerSessions(
            login=np.array([r[0] for r in rows], dtype=float),
            machine=np.array([index[r[1]] for r in rows], dtype=np.int32),
            logout=np.array([r[2] for r in rows], dtype=float),
        )

    def job_table(self) -> Jobs:
        """Jobs that never completed are removed when their user removed them, else at the end
        of the observation (they were still queued or running)."""
        ids = sorted(self.jobs, key=lambda j: self.jobs[j].submit)
        recs = [self.jobs[j] for j in ids]
        remove = [
            np.inf if np.isfinite(r.runtime) else (r.removed or max(self.end, r.submit))
            for r in recs
        ]
        return Jobs(
            job_id=ids,
            user=[r.user for r in recs],
            submit=np.array([r.submit for r in recs], dtype=float),
            runtime=np.array([r.runtime for r in recs], dtype=float),
            remove=np.array(remove, dtype=float),
        )


def inventory_of(machines: Mapping[str, MachineInfo]) -> Inventory:
    """Clusters open all the time: a live pool's opening hours are in its owners' sessions."""
    clusters = {m.cluster: Cluster(m.cluster, OpeningHours.always()) for m in machines.values()}
    specs = [
        MachineSpec(m.name, m.cluster, m.mtype, 1, m.active_watts, m.idle_watts, m.sleep_watts)
        for m in sorted(machines.values(), key=lambda m: m.name)
    ]
    return Inventory(clusters=clusters, machines=specs)


def run(args: argparse.Namespace) -> int:
    if not (args.state / JOURNAL_DIR / "machines.json").exists():
        raise FileNotFoundError(
            f"{args.state}: no {JOURNAL_DIR}/machines.json; point --state at the state directory"
            " of an advisor that observed a condor pool (pool.state_dir)"
        )
    machines = read_machines(args.state)
    builder = TraceBuilder()
    builder.feed(read_events(args.state))
    inventory = inventory_of(machines)
    args.out.mkdir(parents=True, exist_ok=True)
    write_inventory(inventory, args.out / "machines.yaml")
    sessions = builder.owner_sessions(inventory.index())
    write_owner_sessions(sessions, inventory, args.out / "owners.csv")
    jobs = builder.job_table()
    write_jobs(jobs, args.out / "jobs.csv")
    print(
        f"wrote {len(inventory.machines)} machines, {len(sessions)} owner sessions and "
        f"{len(jobs)} jobs to {args.out}"
    )
    return 0
