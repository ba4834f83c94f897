"""Job attempts from a submit host's job event log (optional; the epoch history is the default).

``EventLogAttempts`` turns job events (anything with ``type``, ``cluster``, ``proc``,
``timestamp`` and ``get``) into canonical events; ``EventLogFollower`` reads new events from a
log with ``JobEventLog(path).events(stop_after=0)`` and resumes after a restart by skipping the
events it had already consumed. An event log does not say why a job was evicted; on a desktop
pool that is the owner, so JOB_EVICTED counts as EVICTED_OWNER, while a shadow exception or a
failed reconnect means the machine went away. A condor_rm of a running job writes JOB_EVICTED
and then JOB_ABORTED (docs/live-daemon.md, "A removal is reported as in a replay"), so an
eviction is held until the job's next event, or the next read, to tell the two apart;
JOB_ABORTED of a job not running is the removal of a queued job (``JobRemoved``). A scheduler
or local universe job (DAGMan itself) runs in the schedd's own process: its EXECUTE names no
slot and the host it was submitted from, and it is no attempt on any machine of the pool, so it
is reported as leaving the queue there (``JobRemoved``: nothing waits for it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
)

ENDINGS = {
    "JOB_TERMINATED": AttemptOutcome.COMPLETED,
    "JOB_EVICTED": AttemptOutcome.EVICTED_OWNER,
    "SHADOW_EXCEPTION": AttemptOutcome.EVICTED_REBOOT,
    "JOB_RECONNECT_FAILED": AttemptOutcome.EVICTED_REBOOT,
    "JOB_ABORTED": AttemptOutcome.REMOVED,
    "JOB_HELD": AttemptOutcome.HELD,
}
ALIAS = re.compile(r"[?&]alias=([^&>]+)")
HOST = re.compile(r"^<([^:>?]+)")


class JobEvent(Protocol):
    cluster: int
    proc: int
    timestamp: int

    @property
    def type(self) -> Any: ...

    def get(self, key: str, default: Any = None) -> Any: ...


def execute_machine(event: JobEvent) -> str | None:
    """The machine of an EXECUTE event: ``SlotName``'s host, else the address's alias or host."""
    slot = event.get("SlotName")
    if isinstance(slot, str) and "@" in slot:
        return slot.rpartition("@")[2]
    sinful = event.get("ExecuteHost")
    if not isinstance(sinful, str):
        return None
    match = ALIAS.search(sinful) or HOST.search(sinful)
    return match.group(1) if match else None


@dataclass
class EventLogAttempts:
    """Attempts in progress, by job id: (start time, machine)."""

    watts: Mapping[str, float] = field(default_factory=dict)
    running: dict[str, tuple[float, str]] = field(default_factory=dict)
    submitted_from: dict[str, str] = field(default_factory=dict)
    """The host in each queued job's SUBMIT event, until it starts."""
    evicted: dict[str, tuple[float, float, str]] = field(default_factory=dict)
    """Evictions not yet told apart from a removal: (time, start, machine) by job id."""

    def feed(self, event: JobEvent) -> list[Event]:
        if event.cluster < 0:
            return []
        jid, t, kind = f"{event.cluster}.{event.proc}", float(event.timestamp), event.type.name
        if jid in self.evicted:
            removed = kind == "JOB_ABORTED"
            ended = self._settle(jid, AttemptOutcome.REMOVED if removed else None)
            if removed:  # the running job's condor_rm: one removal, not an owner's eviction
                return ended
            return ended + self.feed(event)
        if kind == "SUBMIT":
            owner = event.get("Owner")
            self.submitted_from[jid] = str(event.get("SubmitHost", ""))
            return [JobQueued(t, jid, owner if isinstance(owner, str) else "unknown")]
        if kind == "EXECUTE":
            machine = execute_machine(event)
            on_schedd = self.submitted_from.pop(jid, None) == event.get("ExecuteHost")
            if on_schedd and event.get("SlotName") is None:  # DAGMan and the like
                return [JobRemoved(t, jid)]
            if machine is None:
                return []
            self.running[jid] = (t, machine)
            return [AttemptStarted(t, jid, machine)]
        if kind == "JOB_ABORTED" and jid not in self.running:
            self.submitted_from.pop(jid, None)
            return [JobRemoved(t, jid)]
        outcome = ENDINGS.get(kind)
        if outcome is None or jid not in self.running:
            return []
        started, machine = self.running.pop(jid)
        t = max(t, started)  # (the hour a clock goes back repeats: the bindings read it once)
        if kind == "JOB_EVICTED":
            self.evicted[jid] = (t, started, machine)
            return []
        return [AttemptEnded(t, jid, machine, outcome, started, self.watts.get(machine, 0.0))]

    def settle(self, jobs: Iterable[str]) -> list[Event]:
        """The held evictions of ``jobs`` that no removal followed: owner evictions."""
        return [e for jid in list(jobs) if jid in self.evicted for e in self._settle(jid, None)]

    def _settle(self, jid: str, outcome: AttemptOutcome | None) -> list[Event]:
        t, started, machine = self.evicted.pop(jid)
        outcome = outcome or ENDINGS["JOB_EVICTED"]
        return [AttemptEnded(t, jid, machine, outcome, started, self.watts.get(machine, 0.0))]


@dataclass
class EventLogFollower:
    """New events of one log file on each ``read()``; ``consumed`` is the persisted cursor."""

    path: Path
    attempts: EventLogAttempts
    consumed: int = 0
    _log: Any = None

    def read(self) -> list[Event]:
        import htcondor2

        if self._log is None:
            if not self.path.exists():
                return []
            self._log = htcondor2.JobEventLog(str(self.path))
            skipped = 0
            while skipped < self.consumed:
                if next(iter(self._log.events(stop_after=0)), None) is None:
                    break
                skipped += 1
        held_over = list(self.attempts.evicted)  # (a poll ago: a removal would be written)
        out: list[Event] = []
        for event in self._log.events(stop_after=0):
            self.consumed += 1
            out += self.attempts.feed(event)
        return out + self.attempts.settle(held_over)

    def state(self) -> dict[str, Any]:
        running = {j: [t, m] for j, (t, m) in self.attempts.running.items()}
        evicted = {j: [t, s, m] for j, (t, s, m) in self.attempts.evicted.items()}
        return {"consumed": self.consumed, "running": running, "evicted": evicted}

    def load(self, state: Mapping[str, Any]) -> None:
        self.consumed = int(state.get("consumed", 0))
        self.attempts.running = {j: (float(t), m) for j, (t, m) in state.get("running", {}).items()}
        self.attempts.evicted = {
            j: (float(t), float(s), m) for j, (t, s, m) in state.get("evicted", {}).items()
        }
        self._log = None
