"""The advice ledger: the one decoder of a policy's answer into per-machine advice and expiry.

A policy answers in deltas (``Advice``: its own advice per machine, named advice and who follows
it, ranks restated by class, one renewal time for all names). The ledger keeps what each machine
carries now, and both drivers read it: the simulator's negotiator ranks machines by it, the
daemon publishes it (``stamped``: each machine's advice with the time it lapses). Machines are
numbered by the driver (the negotiator's pool index, the daemon's join order).

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
from dataclasses import dataclass, field, replace

from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice, with_ranks

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


@dataclass(slots=True)
class Taken:
    """What one answer changed, in the order a consumer applies it: names with another value
    (those that lapsed or came back, then ranks restated by class, then values stated in full),
    then each machine re-advised with what it carries now."""

    restated: list[tuple[str, MachineAdvice]] = field(default_factory=list)
    reranked: list[tuple[str, Mapping[int, float]]] = field(default_factory=list)
    stated: list[tuple[str, MachineAdvice]] = field(default_factory=list)
    machines: list[int] = field(default_factory=list)
    filed: list[Filed] = field(default_factory=list)


class AdviceLedger:
    def __init__(self, lifetime_s: float, resumed: bool = False) -> None:
        self.lifetime_s = lifetime_s
        self.resumed = resumed
        """The policy may know names this ledger never heard (a daemon restarted from a snapshot):
        a follow of an unknown name is neutral, and names stated before any renewal hold for one
        lifetime. Otherwise both are a policy's mistake and raise."""
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

    def take(self, advice: Advice, told: Iterable[tuple[int, Filed | None]], now: float) -> Taken:
        """Fold one answer in: renew and (re)state its names, then file what each machine was
        told (``told.what_was_told``)."""
        taken = Taken()
        revived = self.renew(advice.shared_until, now)
        lapsed, self.lapsed = self.lapsed, []
        if lapsed and not revived:
            taken.restated = [(name, NEUTRAL_MACHINE_ADVICE) for name in lapsed]
        elif revived and not lapsed:  # lapsed in an earlier round: the values apply again
            taken.restated = [(name, self._value(name)) for name in list(self.shared)]
        taken.reranked = self.restate_ranks(advice.shared_ranks)
        taken.stated = [(n, v) for n, v in advice.shared.items() if self.state(n, v, now)]
        pairs = list(told)
        taken.machines = [m for m, _ in pairs]
        taken.filed = self.store_all(pairs, now)
        return taken

    def stamped(self, m: int, cap: float) -> MachineAdvice | None:
        """Machine ``m``'s advice as a sink publishes it: names resolved, ``expires`` set to when
        it lapses (its own time, else its lifetime after it was given; a name's: the names'
        renewal), never later than ``cap``; None when it carries nothing."""
        entry = self._entry(m)
        if entry is None:
            return None
        advice, given = entry
        if m in self.follows:
            lapses = self.shared_until if self.shared_until is not None else cap
        else:
            lapses = advice.expires if advice.expires is not None else given + self.lifetime_s
        return replace(advice, expires=min(lapses, cap))

    def advised(self) -> list[int]:
        """Every machine that carries its own advice or follows a name."""
        return [*self.entries, *self.follows]

    def _value(self, name: str) -> MachineAdvice:
        named = self.named(name)
        assert named is not None
        return named[0]

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
        if self.shared_until is None and self.resumed:
            self.renew(now + self.lifetime_s, now)
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
            if isinstance(advice, str) and advice not in self.shared:
                if not self.resumed:
                    raise ValueError(
                        f"machine {m} follows {advice!r}, which was never stated "
                        "(a policy states a name in Advice.shared before or as machines follow it)"
                    )
                advice = None  # a name from before the restart: neutral until it is stated
            if isinstance(advice, str):
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
