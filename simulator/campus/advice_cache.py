"""The advice the negotiator currently sees per machine, with its publication time and expiry.

Only non-neutral advice is stored: a missing entry *is* the neutral advice, exactly as a missing or
expired attribute is in a live pool. A machine carries either its own advice or follows a named
(shared) advice. A follow stands until the machine is advised otherwise. Names lapse together, at
the time the policy last renewed them (``Advice.shared_until``): while they are lapsed the
followers carry neutral advice, as attributes past ``AdvisorExpires`` do, and the next renewal
applies the names' values to them again. Advice without its own ``expires`` lapses a fixed lifetime
after it is stored, so those lapses queue up in time order (a deque); only explicit expiries need a
heap.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Mapping

from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, MachineAdvice, with_ranks

Filed = MachineAdvice | str
"""What a machine carries: its own advice, or the name of the shared advice it follows."""
Ranks = Mapping[str, Mapping[int, float]]
"""Per named advice, some of its ranks by class (``Advice.shared_ranks``)."""


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
        """Machines with advice of their own: (advice, stored at)."""
        self.follows: dict[int, str] = {}
        self.shared: dict[str, tuple[MachineAdvice, float]] = {}
        """Named advice: (value, stated at); kept while the names are lapsed. Read through
        ``named``: a name restated by class has its new ranks in ``_pending`` until then."""
        self._pending: dict[str, dict[int, float]] = {}
        """Per name restated by class since its value in ``shared`` was built, its new ranks."""
        self.shared_until: float | None = None
        self.names_live = False
        """Whether the names apply now (renewed, and ``shared_until`` not yet reached)."""
        self._expiry: list[tuple[float, int, int]] = []
        """Explicit expiries (a heap), and lapses in the order they fall due (a deque)."""
        self._lapses: deque[tuple[float, int, int]] = deque()
        self._token: dict[int, int] = {}
        self.lapsed: list[str] = []
        """Names that lapsed in ``expire`` (their followers are neutral now); the reader clears."""

    def empty(self) -> bool:
        """No machine carries advice: matching is as if the advisor did not exist."""
        return not self.entries and not self.follows

    def state(self, name: str, value: MachineAdvice, now: float) -> bool:
        """(Re)state a named advice; True when its followers now carry another value."""
        if value.expires is not None:
            raise ValueError(
                f"named advice {name!r} has expires={value.expires}; names lapse together at "
                "Advice.shared_until, so state their values without an expiry"
            )
        if self.shared_until is None:
            raise ValueError(
                f"named advice {name!r} is stated, but the policy never gave "
                "Advice.shared_until (when the names lapse unless renewed)"
            )
        old = self.named(name)  # with any ranks restated by class
        self.shared[name] = (value, now)
        if old is None:
            return self.names_live
        was = old[0]
        # a new row differs in its ranks (compared first: the dataclass's == builds tuples)
        return (
            self.names_live
            and was is not value
            and (was.rank_by_prior_hours != value.rank_by_prior_hours or was != value)
        )

    def restate_ranks(self, restated: Ranks) -> list[tuple[str, Mapping[int, float]]]:
        """Set some of the named advice's ranks by class (``Advice.shared_ranks``); return the
        names whose followers rank by them now, with those ranks (not while the names are lapsed,
        nor a name that holds them; a name never stated in full is ignored). One call for all
        names: a computer-level year restates over a million. A name's time stays that of its
        last full statement, which ``AdvisorPredictedIdle`` counts from."""
        shared, pending, ranked = self.shared, self._pending, []
        for name, ranks in restated.items():
            entry = shared.get(name)
            if entry is None:
                continue
            waiting = pending.get(name)
            if waiting is None:
                pending[name] = dict(ranks)
            else:
                waiting.update(ranks)
            if not entry[0].hold:
                ranked.append((name, ranks))
        return ranked if self.names_live else []

    def named(self, name: str) -> tuple[MachineAdvice, float] | None:
        """A named advice's value and when it was last stated."""
        entry = self.shared.get(name)
        pending = None if entry is None else self._pending.pop(name, None)
        if entry is not None and pending is not None:  # restated by class since it was built
            entry = self.shared[name] = (with_ranks(entry[0], pending), entry[1])
        return entry

    def renew(self, until: float | None, now: float) -> bool:
        """The names hold until ``until`` (None: as last renewed); True when they had lapsed
        and apply again (their followers re-rank)."""
        if until is None:
            return False
        self.shared_until = until
        if self.names_live and until <= now:  # renewed into the past: they lapse now
            self._expire_shared(now)
        revived = not self.names_live and until > now and bool(self.shared)
        self.names_live = until > now
        return revived

    def store_all(self, updates: Iterable[tuple[int, Filed | None]], now: float) -> list[Filed]:
        """``store`` each (machine, advice or followed name) in order; return what each carries
        now (a name it follows, else its advice, neutral included)."""
        entries, tokens, expiry, push = self.entries, self._token, self._expiry, heapq.heappush
        lapses, follows = self._lapses, self.follows
        lapse = now + self.lifetime_s
        in_order = not lapses or lapses[-1][0] <= lapse
        published: list[Filed] = []
        for m, advice in updates:
            if advice is not None and follows.get(m) == advice:
                published.append(advice)  # still following the same name: nothing to redo
                continue
            token = tokens.get(m, 0) + 1
            tokens[m] = token
            follows.pop(m, None)
            if isinstance(advice, str):
                if advice not in self.shared:
                    raise ValueError(
                        f"machine {m} follows {advice!r}, which was never stated "
                        "(a policy states a name in Advice.shared before or as machines follow it)"
                    )
                entries.pop(m, None)
                follows[m] = advice
                published.append(advice)
                continue
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
        entries = self.entries
        for _, m, _ in due:
            entries.pop(m, None)
        self._expire_shared(now)
        if not due:  # the usual cycle: nothing to sort
            return []
        due.sort()
        return [m for _, m, _ in due]

    def _expire_shared(self, now: float) -> None:
        """Past ``shared_until`` every name lapses (its followers stay, neutral for now)."""
        if self.names_live and self.shared_until is not None and self.shared_until <= now:
            self.names_live = False
            self.lapsed.extend(self.shared)

    def next_expiry(self) -> float | None:
        """When the earliest stored advice lapses (it may since have been replaced)."""
        first = [self._expiry[0][0]] if self._expiry else []  # no comprehension: once a cycle
        if self._lapses:
            first.append(self._lapses[0][0])
        if self.names_live and self.shared_until is not None:
            first.append(self.shared_until)
        return min(first) if first else None

    def _entry(self, m: int) -> tuple[MachineAdvice, float] | None:
        entry = self.entries.get(m)
        if entry is None:
            name = self.follows.get(m)
            if name is not None and self.names_live:
                entry = self.named(name)
        return entry

    def filed(self, m: int) -> Filed:
        """What machine ``m`` carries now: the name it follows, else its advice."""
        name = self.follows.get(m)
        return name if name is not None else self.get(m)

    def get(self, m: int) -> MachineAdvice:
        entry = self._entry(m)
        return NEUTRAL_MACHINE_ADVICE if entry is None else entry[0]

    def remaining_idle(self, m: int, now: float) -> float | None:
        """``AdvisorPredictedIdle - (time() - AdvisorUpdated)``: the idle time still ahead."""
        entry = self._entry(m)
        if entry is None or entry[0].predicted_idle_s is None:
            return None
        return entry[0].predicted_idle_s - (now - entry[1])
