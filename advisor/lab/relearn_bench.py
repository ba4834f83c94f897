"""``bench-daemon relearn``: how long a restarted idle policy takes to learn its owner history
again from the journal (``advisor.lab.relearn``), for a generated campus written as the live
source writes it: every owner session's start and end and every machine's nightly reboot."""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from advisor.condor.journal import Journal
from advisor.daemon.host import PolicyHost
from advisor.daemon.metrics import DaemonMetrics
from advisor.lab.relearn import relearn
from plugins.contract.events import (
    Event,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.policy import PolicyContext
from plugins.contract.registry import policy_class
from simulator.campus.replay import machine_infos
from simulator.campus.rules import CAMPUS_REBOOT_HOUR
from simulator.campus.scenario import generate_campus, load_campus_config

CHUNK = 100_000
"""Events a journal append writes at once (the live source appends each poll's)."""


class Unpolled:
    """The host's source: relearning reads the journal, never the pool."""

    def poll(self, now: float) -> Any:
        raise RuntimeError("relearning does not poll the pool")

    def cursor(self) -> dict[str, Any]:
        return {}

    def restore(self, cursor: Any) -> None:
        """Nothing to resume: the bench never polls."""


def owner_events(days: int, scale: float, seed: int) -> tuple[list[Event], dict[str, Any]]:
    """A generated campus's owner sessions and nightly reboots as events in time order."""
    trace = generate_campus(load_campus_config(None), days, scale, seed)
    names = [m.name for m in trace.inventory.machines]
    owners = trace.owners
    events: list[Event] = []
    for login, machine, logout in zip(owners.login, owners.machine, owners.logout, strict=True):
        events.append(OwnerSessionStarted(float(login), names[machine]))
        events.append(OwnerSessionEnded(float(logout), names[machine]))
    first = trace.start - trace.start % 86400 + CAMPUS_REBOOT_HOUR * 3600
    for night in np.arange(first, trace.end, 86400.0).tolist():
        events += [MachinePowerChanged(night, name, PowerState.REBOOTED) for name in names]
    events.sort(key=lambda e: e.time)
    return events, machine_infos(trace)


def bench_relearn(policy: str, days: int, scale: float, seed: int, work: Path) -> dict[str, Any]:
    """Figures of one relearning: events, journal size, wall and CPU seconds, peak RSS."""
    events, machines = owner_events(days, scale, seed)
    journal = Journal(work)
    for at in range(0, len(events), CHUNK):
        chunk = events[at : at + CHUNK]
        journal.append(chunk, chunk[-1].time)  # as the pool's source at that time
    learner = policy_class(policy)(PolicyContext(machines=dict(machines), seed=seed))
    host = PolicyHost(learner, Unpolled(), [], DaemonMetrics(time.time), 600.0)
    host.join(machines)
    wall, cpu = time.perf_counter(), time.process_time()
    fed = relearn(host, {"cursor": {"journal_bytes": journal.size()}}, work)
    return {
        "machines": len(machines),
        "events": fed,
        "journal_mb": journal.size() / 1e6,
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
