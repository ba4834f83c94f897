"""Attempts whose end no epoch ad reports (docs/live-daemon.md, "An attempt without an epoch ad").

A shadow writes an attempt's epoch ad as the attempt ends. One that dies (killed, out of
memory) writes none, and the job is back in the queue. The
policies were never told that the attempt ended: the replica policy counted it running for
good, the bandits never rewarded its placement, and the control group kept its job open. So an
attempt the queue saw start, whose job the queue then shows idle, held or in a later attempt,
ends here as lost to the machine's side (as a failed reconnect's epoch ad would,
epochs.py), at the time the queue shows it over, if no epoch ad came within ``LOST_AFTER_S``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

LOST_AFTER_S = 600.0
"""How long after an attempt is over in the queue its epoch ad may still come: concurrent
shadows append theirs seconds out of order (schedd_reader.py), and a poll may fall between."""
KEEP_CLOSED_S = 86400.0
"""How long an attempt ended here is remembered, so that an epoch ad come late is dropped."""

Key = tuple[str, float]
"""(job, start of the attempt)."""


@dataclass
class LostAttempts:
    """The attempts the queue reported started and no epoch ad has ended."""

    running: dict[str, Key] = field(default_factory=dict)
    """Per job, the attempt the queue showed running last."""
    machine: dict[Key, str] = field(default_factory=dict)
    """Every open attempt's machine."""
    over: dict[Key, float] = field(default_factory=dict)
    """Open attempts the queue shows over, since when."""
    closed: dict[Key, float] = field(default_factory=dict)
    """Attempts ended here, with the time they were."""

    def started(self, jid: str, start: float, machine: str) -> None:
        """The queue shows the job running this attempt; one it showed before is over."""
        key = (jid, start)
        if key in self.machine or key in self.closed:
            return
        self.stopped(jid, start)
        self.running[jid] = key
        self.machine[key] = machine

    def stopped(self, jid: str, when: float) -> None:
        """The queue shows the job no longer in the attempt it ran last."""
        key = self.running.pop(jid, None)
        if key is not None and key in self.machine:
            self.over[key] = when

    def ended(self, jid: str, start: float) -> bool:
        """An epoch ad reports this attempt's end: whether it was ended here already."""
        key = (jid, start)
        self.machine.pop(key, None)
        self.over.pop(key, None)
        if self.running.get(jid) == key:
            del self.running[jid]
        return key in self.closed

    def gone(self, jid: str) -> None:
        """The job left the queue: its epoch ad, or nothing, ends its attempts (job_queue.py
        forgets a start a day on)."""
        self.running.pop(jid, None)

    def due(self, now: float) -> list[tuple[str, str, float, float]]:
        """(job, machine, start, end) of each attempt over for ``LOST_AFTER_S`` without an
        epoch ad; each is then remembered as ended here."""
        lost = [key for key, when in self.over.items() if now - when >= LOST_AFTER_S]
        out = []
        for key in lost:
            when = self.over.pop(key)
            out.append((key[0], self.machine.pop(key), key[1], max(when, key[1])))
            self.closed[key] = when
        self.closed = {k: t for k, t in self.closed.items() if now - t < KEEP_CLOSED_S}
        running = set(self.running.values())
        self.machine = {k: m for k, m in self.machine.items() if k in self.over or k in running}
        return out

    def state(self) -> dict[str, Any]:
        return {
            "open": [[j, s, m, self.over.get((j, s))] for (j, s), m in self.machine.items()],
            "running": sorted(self.running),
            "closed": [[j, s, t] for (j, s), t in self.closed.items()],
        }

    def load(self, state: Mapping[str, Any]) -> None:
        running = set(state.get("running", []))
        for jid, start, machine, over in state.get("open", []):
            key = (str(jid), float(start))
            self.machine[key] = str(machine)
            if over is not None:
                self.over[key] = float(over)
            if key[0] in running and over is None:
                self.running[key[0]] = key
        self.closed = {(str(j), float(s)): float(t) for j, s, t in state.get("closed", [])}
