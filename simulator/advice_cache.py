"""The advice the negotiator currently sees per machine, with its publication time and expiry.

Only non-neutral advice is stored: a missing entry *is* the neutral advice, exactly as a missing or
expired attribute is in a live pool. Advice without its own ``expires`` lapses a fixed lifetime
after it is stored, so those lapses queue up in time order (a deque); only explicit expiries need
a heap.
"""

from __future__ import annotations

import heapq
from collections import deque

from plugins.advice import NEUTRAL_MACHINE_ADVICE, MachineAdvice


def is_neutral(advice: MachineAdvice | None) -> bool:
    """``advice is None or advice == NEUTRAL_MACHINE_ADVICE``; the two fields that learning
    policies set on nearly every advice are tested first, so the dataclass ``__eq__`` (millions
    of calls a year) only runs for the rare rest, and a field added later is still compared."""
    return (
        advice is None
        or advice is NEUTRAL_MACHINE_ADVICE
        or (
            advice.rank_by_prior_hours is None
            and advice.predicted_idle_s is None
            and advice == NEUTRAL_MACHINE_ADVICE
        )
    )


class AdviceCache:
    def __init__(self, lifetime_s: float) -> None:
        self.lifetime_s = lifetime_s
        self.entries: dict[int, tuple[MachineAdvice, float]] = {}
        self._expiry: list[tuple[float, int, int]] = []
        """Explicit expiries (a heap), and lapses in the order they fall due (a deque)."""
        self._lapses: deque[tuple[float, int, int]] = deque()
        self._token: dict[int, int] = {}

    def store_all(
        self, updates: list[tuple[int, MachineAdvice | None]], now: float
    ) -> list[MachineAdvice]:
        """``store`` each (machine, advice) in order; return the advice each now carries."""
        entries, tokens, expiry, push = self.entries, self._token, self._expiry, heapq.heappush
        lapses = self._lapses
        lapse = now + self.lifetime_s
        in_order = not lapses or lapses[-1][0] <= lapse
        published = []
        for m, advice in updates:
            token = tokens.get(m, 0) + 1
            tokens[m] = token
            if is_neutral(advice):
                entries.pop(m, None)
                published.append(NEUTRAL_MACHINE_ADVICE)
                continue
            assert advice is not None
            entries[m] = (advice, now)
            if advice.expires is not None:
                push(expiry, (advice.expires, m, token))
            elif in_order:
                lapses.append((lapse, m, token))
            else:
                push(expiry, (lapse, m, token))
            published.append(advice)
        return published

    def expire(self, now: float) -> list[int]:
        """Drop advice whose time is up; return those machines (they need fresh advice), in
        order of (expiry, machine)."""
        due = []
        tokens = self._token
        heap, lapses, pop = self._expiry, self._lapses, heapq.heappop
        while heap and heap[0][0] <= now:
            entry = pop(heap)
            if tokens.get(entry[1]) == entry[2]:
                due.append(entry)
        while lapses and lapses[0][0] <= now:
            entry = lapses.popleft()
            if tokens.get(entry[1]) == entry[2]:
                due.append(entry)
        due.sort()
        entries = self.entries
        for _, m, _ in due:
            entries.pop(m, None)
        return [m for _, m, _ in due]

    def next_expiry(self) -> float | None:
        """When the earliest stored advice lapses (it may since have been replaced)."""
        first = [queue[0][0] for queue in (self._expiry, self._lapses) if queue]
        return min(first) if first else None

    def get(self, m: int) -> MachineAdvice:
        entry = self.entries.get(m)
        return NEUTRAL_MACHINE_ADVICE if entry is None else entry[0]

    def remaining_idle(self, m: int, now: float) -> float | None:
        """``AdvisorPredictedIdle - (time() - AdvisorUpdated)``: the idle time still ahead."""
        entry = self.entries.get(m)
        if entry is None or entry[0].predicted_idle_s is None:
            return None
        return entry[0].predicted_idle_s - (now - entry[1])
