"""The class of a new job, from the runtimes its user's completed jobs had.

A job that never ran is class 0, ranked for the runtime of any completed job; but runtimes are
alike per user (a user runs the same code on other inputs: in the campus scenario a user's
median explains about a third of the spread of log runtimes, docs/robust-policies.md), so a job
of a user whose jobs all ran hours is better started where owners stay away for hours. The
class is a low quantile of the user's latest runtimes, so that nearly all of them needed at
least that long. It guides where the job starts, not whether: it is lowered to a class most
machines rank now, at the job's queueing and, while it waits, each hour the ranks change; a
class kept off later in the day would otherwise keep a new job waiting for hours.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

import numpy as np

from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.clock import HOUR

OPEN_SHARE = 0.5
"""A new job's class is one ranked (not kept off) on most of the machines now."""
KEEP = 50
"""Completed runtimes remembered per user (the latest: a user's work changes)."""
MIN_SEEN = 10
"""Completed jobs of a user seen before its runtimes are trusted."""


def open_class(k: int, open_share: np.ndarray) -> int:
    """The highest class up to k that most machines rank now (0 is never kept off)."""
    while k > 0 and open_share[k] < OPEN_SHARE:
        k -= 1
    return k


def open_shares(rows: list[tuple[float, ...]]) -> np.ndarray:
    """Per class, the share of the machines (one rank row each) whose rank does not keep it off."""
    if not rows:
        return np.zeros(PRIOR_HOURS_CLASSES)
    return (np.array(rows) > 0).mean(axis=0)


class UserRuntimes:
    def __init__(self) -> None:
        self.user_of: dict[str, str] = {}
        """Queued or running jobs, by job id."""
        self.runtimes: dict[str, deque[float]] = {}
        self.known: dict[str, dict[float, int]] = {}
        """``surely_needs_hours`` per user and quantile, until the user's runtimes change: it
        takes 15% off a year's replay (campus, scale 0.25, pure Python: 22.4 and 21.7 s against
        26.2 and 25.8 s uncached, the same jobs.csv)."""
        self.waiting: dict[str, tuple[int, int]] = {}
        """New jobs classed by their user's runtimes, not started yet: the class the runtimes
        say and the class given (lowered to one most machines rank)."""
        self.holds: dict[str, float] = {}
        """Such jobs held until the reboot (frugal 13): new advice of their class keeps the hold
        (advice without one lifts it)."""

    def queued(
        self, job: str, user: str, needs: int, open_share: np.ndarray, until: float | None = None
    ) -> int:
        """The class a new job of ``user`` is given, ``needs`` hours at most (0: none); it is
        held ``until`` then, if not None."""
        self.user_of[job] = user
        given = open_class(needs, open_share)
        if needs > 0:
            self.waiting[job] = (needs, given)
            if until is not None:
                self.holds[job] = until
        return given

    def hold_of(self, job: str, now: float) -> float | None:
        """The hold a new class of the job must keep (None: none, or it has ended)."""
        until = self.holds.get(job)
        return until if until is not None and until > now else None

    def started(self, job: str) -> None:
        self.waiting.pop(job, None)
        self.holds.pop(job, None)

    def reclassed(self, open_share: np.ndarray) -> dict[str, int]:
        """Waiting jobs whose class changes now that the machines rank other classes: a class
        kept off later would keep a new job waiting for hours, which ranking it must not."""
        changed = {}
        for job, (needs, given) in self.waiting.items():
            now = open_class(needs, open_share)
            if now != given:
                changed[job] = now
        for job, now in changed.items():
            self.waiting[job] = (self.waiting[job][0], now)
        return changed

    def completed(self, job: str, runtime_s: float) -> None:
        user = self.user_of.pop(job, None)
        if user is not None:
            self.runtimes.setdefault(user, deque(maxlen=KEEP)).append(runtime_s)
            self.known.pop(user, None)

    def left(self, job: str) -> None:
        self.user_of.pop(job, None)
        self.waiting.pop(job, None)
        self.holds.pop(job, None)

    def surely_needs_hours(self, user: str, quantile: float) -> int:
        """Whole hours that all but ``quantile`` of the user's recent jobs needed (0: unknown)."""
        known = self.known.setdefault(user, {})
        if quantile not in known:
            seen = self.runtimes.get(user, ())
            q = np.quantile(np.fromiter(seen, float), quantile) if len(seen) >= MIN_SEEN else 0.0
            known[quantile] = int(q // HOUR)
        return known[quantile]

    def state_dict(self) -> dict[str, Any]:
        return {
            "user_of": dict(self.user_of),
            "runtimes": {u: list(r) for u, r in self.runtimes.items()},
            "waiting": {job: list(classes) for job, classes in self.waiting.items()},
            "holds": dict(self.holds),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.user_of = dict(state["user_of"])
        self.known = {}
        self.runtimes = {u: deque(map(float, r), maxlen=KEEP) for u, r in state["runtimes"].items()}
        self.waiting = {job: (int(n), int(g)) for job, (n, g) in state["waiting"].items()}
        self.holds = {job: float(t) for job, t in state.get("holds", {}).items()}  # (frugal 13)
