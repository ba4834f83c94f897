"""Free machines grouped by the advice they carry, so matching ranks groups, not machines.

Policies that advise many machines alike (a bandit choosing clusters) hand out equal
``MachineAdvice`` per group; ranking the few distinct objects per class and drawing a random member
of the best group is what HTCondor's "highest rank, ties at random" amounts to, at a cost that does
not grow with the number of free machines. Groups are keyed by the advice's value, not its
identity, so a policy restored from a snapshot (new but equal objects) files machines exactly as
the uninterrupted one did. Members are dropped lazily: a member that is no longer
free in its family (awake or asleep) is discarded when it is drawn.
"""

from __future__ import annotations

import random

from plugins.advice import MachineAdvice
from simulator.indexed_set import IndexedSet


class AdviceGroups:
    def __init__(self, family: IndexedSet, rand: random.Random) -> None:
        self.family = family
        self.rand = rand
        self.groups: dict[MachineAdvice, tuple[MachineAdvice, IndexedSet]] = {}
        self.key_of: dict[int, MachineAdvice] = {}
        self._levels: dict[int, list[list[MachineAdvice]]] = {}

    def assign(self, m: int, advice: MachineAdvice) -> None:
        key = advice
        old = self.key_of.get(m)
        if old is not None:
            if old is key or old == key:
                return  # re-advised alike (a lapse): already filed under it
            self._leave(m, old)
        self.key_of[m] = key
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = (advice, IndexedSet())
            self._levels.clear()
        group[1].add(m)

    def drop(self, m: int) -> None:
        old = self.key_of.pop(m, None)
        if old is not None:
            self._leave(m, old)

    def _leave(self, m: int, key: MachineAdvice) -> None:
        members = self.groups[key][1]
        members.discard(m)
        if not members:
            del self.groups[key]
            self._levels.clear()

    def levels(self, k: int) -> list[list[MachineAdvice]]:
        """Group keys for class k by rank, best first; held and negative ranks left out."""
        found = self._levels.get(k)
        if found is None:
            by_rank: dict[float, list[MachineAdvice]] = {}
            for key, (advice, _) in self.groups.items():
                rank = advice.rank_for(k)
                if not advice.hold and rank >= 0:
                    by_rank.setdefault(rank, []).append(key)
            found = self._levels[k] = [by_rank[r] for r in sorted(by_rank, reverse=True)]
        return found

    def pick(self, k: int) -> int | None:
        """A random free member of the best group for class k (None: no machine takes it)."""
        for level in self.levels(k):
            while True:
                sizes = [len(self.groups[key][1]) if key in self.groups else 0 for key in level]
                total = sum(sizes)
                if total == 0:
                    break
                r = self.rand.randrange(total)
                i = 0
                while r >= sizes[i]:
                    r -= sizes[i]
                    i += 1
                key = level[i]
                m = self.groups[key][1].at(r)
                if m in self.family and self.key_of.get(m) == key:
                    return m
                self._forget(m, key)
        return None

    def _forget(self, m: int, key: MachineAdvice) -> None:
        if self.key_of.get(m) == key:
            del self.key_of[m]
        self._leave(m, key)
