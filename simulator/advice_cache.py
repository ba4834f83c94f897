"""The advice the negotiator currently sees per machine, with its publication time and expiry.

Only non-neutral advice is stored: a missing entry *is* the neutral advice, exactly as a missing or
expired attribute is in a live pool.
"""

from __future__ import annotations

import heapq

from plugins.advice import NEUTRAL_MACHINE_ADVICE, MachineAdvice


class AdviceCache:
    def __init__(self, lifetime_s: float) -> None:
        self.lifetime_s = lifetime_s
        self.entries: dict[int, tuple[MachineAdvice, float]] = {}
        self._expiry: list[tuple[float, int, int]] = []
        self._token: dict[int, int] = {}

    def store(self, m: int, advice: MachineAdvice | None, now: float) -> None:
        token = self._token.get(m, 0) + 1
        self._token[m] = token
        if advice is None or advice == NEUTRAL_MACHINE_ADVICE:
            self.entries.pop(m, None)
            return
        self.entries[m] = (advice, now)
        expires = advice.expires if advice.expires is not None else now + self.lifetime_s
        heapq.heappush(self._expiry, (expires, m, token))

    def expire(self, now: float) -> list[int]:
        """Drop advice whose time is up; return those machines (they need fresh advice)."""
        lapsed = []
        heap = self._expiry
        while heap and heap[0][0] <= now:
            _, m, token = heapq.heappop(heap)
            if self._token.get(m) == token:
                self.entries.pop(m, None)
                lapsed.append(m)
        return lapsed

    def next_expiry(self) -> float | None:
        """When the earliest stored advice lapses (it may since have been replaced)."""
        return self._expiry[0][0] if self._expiry else None

    def get(self, m: int) -> MachineAdvice:
        entry = self.entries.get(m)
        return NEUTRAL_MACHINE_ADVICE if entry is None else entry[0]

    def remaining_idle(self, m: int, now: float) -> float | None:
        """``AdvisorPredictedIdle - (time() - AdvisorUpdated)``: the idle time still ahead."""
        entry = self.entries.get(m)
        if entry is None or entry[0].predicted_idle_s is None:
            return None
        return entry[0].predicted_idle_s - (now - entry[1])
