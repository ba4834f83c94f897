"""What the placement bandits remember about jobs: their prior-hours class, where each running
attempt was placed and in which state, and the queue decisions still waiting for a verdict."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from plugins.bandits.agent import from_json_key, json_key
from plugins.contract.advice import PRIOR_HOURS_CLASSES

HOUR = 3600.0
COMPACT_AT = 1000
"""A class's list of jobs without a queue decision is cleaned of jobs gone past this length."""


class JobMemory:
    def __init__(self) -> None:
        self.longest: dict[str, float] = {}
        self.queued: set[str] = set()
        self.unjudged: list[list[str]] = [[] for _ in range(PRIOR_HOURS_CLASSES)]
        """Per class, queued jobs without a queue decision in their current wait."""
        self.placed: dict[str, tuple[Hashable, Hashable]] = {}
        self.pending: dict[str, list[tuple[float, Hashable]]] = {}
        """Queue decisions (time, state) per job, judged when the job completes."""

    def prior_class(self, job: str) -> int:
        longest = self.longest.get(job)  # most jobs never ran before: no entry
        return 0 if longest is None else min(int(longest // HOUR), PRIOR_HOURS_CLASSES - 1)

    def enqueue(self, job: str) -> None:
        """Queue a job for decisions, once: its eviction re-queues it, and the schedd's report
        of it idle again (``JobQueued``) then changes nothing."""
        if job in self.queued:
            return
        self.queued.add(job)
        waiting = self.unjudged[self.prior_class(job)]
        waiting.append(job)
        if len(waiting) > COMPACT_AT and len(waiting) > 2 * (len(self.queued) + len(self.placed)):
            self._forget_gone(waiting)

    def _forget_gone(self, waiting: list[str]) -> None:
        """Drop the jobs that are neither queued nor running: they completed or were removed,
        so no decision can count them again (``queue_decision`` takes queued jobs only, and only
        a running job is queued again). A class that is never left queued would otherwise keep
        every job it ever saw, in memory and in each snapshot. Which ones are dropped, and when,
        changes no decision."""
        waiting[:] = [j for j in waiting if j in self.queued or j in self.placed]

    def queue_decision(self, k: int, now: float, state: Hashable) -> None:
        """Class ``k`` stays queued this cycle: one decision per job and wait (penalised once)."""
        for job in self.unjudged[k]:
            if job in self.queued:
                self.pending.setdefault(job, []).append((now, state))
        self.unjudged[k] = []

    def start(self, job: str, state: Hashable, action: Hashable) -> None:
        self.queued.discard(job)
        self.placed[job] = (state, action)

    def end(self, job: str, duration: float, requeued: bool) -> tuple[Hashable, Hashable] | None:
        """Forget the attempt; return where it was placed (None if the policy never saw it)."""
        placed = self.placed.pop(job, None)
        if requeued:
            self.longest[job] = max(self.longest.get(job, 0.0), duration)
            self.enqueue(job)
        return placed

    def finish(self, job: str) -> list[tuple[float, Hashable]]:
        """The job is gone (completed or removed): its queue decisions, to judge or drop."""
        self.longest.pop(job, None)
        self.queued.discard(job)
        return self.pending.pop(job, [])

    def oldest_pending(self, default: float) -> float:
        """The earliest queue decision still waiting for its verdict."""
        return min((t for waits in self.pending.values() for t, _ in waits), default=default)

    def state_dict(self) -> dict[str, Any]:
        return {
            "longest": dict(self.longest),
            "queued": sorted(self.queued),
            "unjudged": self.unjudged,
            "placed": {job: [json_key(s), a] for job, (s, a) in self.placed.items()},
            "pending": {job: [[t, json_key(s)] for t, s in w] for job, w in self.pending.items()},
        }

    def load_state(self, saved: dict[str, Any]) -> None:
        self.longest = {str(k): float(v) for k, v in saved["longest"].items()}
        self.queued = set(saved["queued"])
        self.unjudged = [list(jobs) for jobs in saved["unjudged"]]
        self.placed = {
            job: (from_json_key(s), from_json_key(a)) for job, (s, a) in saved["placed"].items()
        }
        self.pending = {
            job: [(float(t), from_json_key(s)) for t, s in waits]
            for job, waits in saved["pending"].items()
        }
