"""Free machines grouped by the advice they carry, so matching ranks groups, not machines.

Policies that advise many machines alike (a bandit choosing clusters) hand out equal
``MachineAdvice`` per group; ranking the few distinct objects per class and drawing a random member
of the best group is what HTCondor's "highest rank, ties at random" amounts to, at a cost that does
not grow with the number of free machines. Groups are keyed by the advice's value, not its
identity, so a policy restored from a snapshot (new but equal objects) files machines exactly as
the uninterrupted one did. A group keeps its members per family (awake, asleep), so a machine
falling asleep or waking moves between two sets of its group and the ranking of the groups is kept
once for both. Members are dropped lazily: a member that is no longer free in its family is
discarded when it is drawn.

A value is hashed once per advice object: each object seen is mapped (by identity) to the small
int naming its value, so the millions of re-filings in a year compare ints, not dataclasses.
Machines that follow a named advice form the group of that name (a negative key): a new value of
the name re-ranks the whole group at once, without touching its members. Such a group stays while
it is empty: its members come and go all day, and re-ranking the classes every time it empties and
fills again would cost more than an empty group in the levels (there is one per name).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from itertools import compress
from operator import ne

from plugins.contract.advice import PRIOR_HOURS_CLASSES, MachineAdvice
from plugins.contract.ledger import Filed, Taken
from simulator.campus.group_levels import KEPT_OFF, Level, Members, Places, places_of
from simulator.indexed_set import IndexedSet

KNOWN_OBJECTS = 20_000
"""Advice objects remembered by identity before the memory is trimmed to the live groups."""
FEW_GROUPS = 8
"""A level of more groups than this (machines that rank alike: a computer bandit's untried ones)
lists its members once for its draws; fewer are drawn from in proportion to their sizes."""


Group = tuple[MachineAdvice, Members, Places]


class AdviceGroups:
    def __init__(
        self,
        families: tuple[IndexedSet, IndexedSet],
        rand: random.Random,
        value_of: Callable[[str], MachineAdvice],
    ) -> None:
        self.families = families
        """The pool's free machines: awake, asleep (matching tries them in this order)."""
        self.rand = rand
        self.value_of = value_of
        """The current value of a named advice."""
        self._name_keys: dict[str, int] = {}
        self.groups: dict[int, Group] = {}
        """Per key, the group's advice, its members (in filing order) and its places (a name
        restated by class keeps the advice it was last stated with in full; its places are new)."""
        self.key_of: dict[int, int] = {}
        self._levels: dict[int, list[Level]] = {}
        self._ranked: list[dict[int, float]] = [{} for _ in range(PRIOR_HOURS_CLASSES)]
        """Per class k, the rank of each group that takes class-k jobs (the levels' source: a
        bandit advising a thousand machines keeps most of them off each class)."""
        self._drawn_out: tuple[dict[int, int], dict[int, int]] = ({}, {})
        """Per family and class, how many of the class's first levels have no member of that
        family left: a burst of jobs draws the levels out one by one, and each pick starts past
        them. Forgotten when members are added or the levels rebuilt."""
        self._generation = [0, 0]
        """Per family, bumped whenever members are added (levels list their members anew)."""
        self._by_object: dict[int, tuple[int, MachineAdvice]] = {}
        """``id(advice)`` -> (value id, advice); holding the advice keeps its ``id`` unique."""
        self._by_value: dict[MachineAdvice, int] = {}
        self._next_id = 0

    def value_id(self, advice: MachineAdvice) -> int:
        """The same int for equal advice (for as long as a group of that value lives)."""
        known = self._by_object.get(id(advice))
        if known is not None:
            return known[0]
        vid = self._by_value.get(advice)
        if vid is None:
            if len(self._by_object) > KNOWN_OBJECTS:
                self._trim()
            vid = self._by_value[advice] = self._next_id
            self._next_id += 1
        self._by_object[id(advice)] = (vid, advice)
        return vid

    def name_key(self, name: str) -> int:
        """The (negative) group key of the machines following ``name``."""
        key = self._name_keys.get(name)
        if key is None:
            key = self._name_keys[name] = -1 - len(self._name_keys)
        return key

    def apply(self, taken: Taken) -> None:
        """What an answer changed (``AdviceLedger.take``), in its order."""
        for name, value in taken.restated:
            self.restate(name, value)
        self.rerank(taken.reranked)
        for name, value in taken.stated:
            self.restate(name, value)
        self.refile(taken.machines, taken.filed)

    def restate(self, name: str, value: MachineAdvice) -> None:
        """A named advice has a new value: its followers now rank by it."""
        key = self._name_keys.get(name)  # a name no machine followed yet has no group
        group = None if key is None else self.groups.get(key)
        if key is not None and group is not None:
            _, members, before = group
            after = places_of(value)
            self.groups[key] = (value, members, after)
            self._reranked(key, before, after)

    def rerank(self, restated: Iterable[tuple[str, Mapping[int, float]]]) -> None:
        """Named advice restated by class: the followers of each name rank class k jobs by its
        ``ranks[k]``. ``_reranked``'s step for a few classes, kept apart: building a row to call
        it cost a computer-level replay 6% more instructions (about 1.9 M calls a year)."""
        name_keys, groups, levels, ranked = self._name_keys, self.groups, self._levels, self._ranked
        for name, ranks in restated:
            key = name_keys.get(name)
            group = None if key is None else groups.get(key)
            if key is None or group is None:
                continue
            places = group[2]
            if not isinstance(places, list):  # its own copy, changed in place from now on
                places = list(places)
                groups[key] = (group[0], group[1], places)
            for k, rank in ranks.items():
                before = places[k]
                if rank == before:
                    continue
                places[k] = rank
                if rank >= 0:
                    ranked[k][key] = rank
                elif before >= 0:
                    del ranked[k][key]
                else:
                    continue
                levels.pop(k, None)

    def _trim(self) -> None:
        """Forget values no group carries now (a later equal value opens a new group anyway)."""
        self._by_value = {group[0]: vid for vid, group in self.groups.items() if vid >= 0}
        self._by_object = {id(advice): (vid, advice) for advice, vid in self._by_value.items()}

    def refile(self, machines: list[int], advice: list[Filed]) -> None:
        """Machines re-advised, in order: file each free one under its advice (or the name it
        follows) in the family it is in now; one that changed family moves within its group."""
        awake, asleep = self.families[0].live, self.families[1].live
        key_of, groups = self.key_of, self.groups
        for drawn_out in self._drawn_out:
            drawn_out.clear()
        self._generation[0] += 1
        self._generation[1] += 1
        for m, adv in zip(machines, advice, strict=True):
            if m in awake:
                here = 0
            elif m in asleep:
                here = 1
            else:
                continue
            key = self.name_key(adv) if isinstance(adv, str) else self.value_id(adv)
            old = key_of.get(m)
            if old == key:
                members = groups[key][1]
                if m not in members[here].live:  # fell asleep or woke: same advice, other family
                    members[1 - here].discard(m)
                    members[here].add(m)
                continue
            if old is not None:
                self._leave(m, old)
            key_of[m] = key
            group = groups.get(key)
            if group is None:
                value = self.value_of(adv) if isinstance(adv, str) else adv
                group = groups[key] = (value, (IndexedSet(), IndexedSet()), places_of(value))
                self._reranked(key, KEPT_OFF, group[2])
            group[1][here].add(m)

    def _leave(self, m: int, key: int) -> None:
        members = self.groups[key][1]
        members[0].discard(m)
        members[1].discard(m)
        if key >= 0 and not (members[0].items or members[1].items):
            self._reranked(key, self.groups.pop(key)[2], KEPT_OFF)

    def _reranked(self, key: int, before: Places, after: Places) -> None:
        """Group ``key`` changed its advice, came or went: move its rank in the classes whose
        ranking that changes, and forget their levels (a decision for one class changes one
        rank in each row)."""
        if before is after:
            return
        levels, ranked = self._levels, self._ranked
        for k in compress(range(PRIOR_HOURS_CLASSES), map(ne, before, after)):
            rank = after[k]
            if rank >= 0:
                ranked[k][key] = rank
            elif before[k] >= 0:
                del ranked[k][key]
            else:
                continue  # kept off before and after
            levels.pop(k, None)

    def levels(self, k: int) -> list[Level]:
        """The groups for class k by rank, best first; held and negative ranks left out."""
        found = self._levels.get(k)
        if found is None:
            by_rank: dict[float, Level] = {}
            groups = self.groups
            for key, rank in self._ranked[k].items():
                members = groups[key][1]
                level = by_rank.get(rank)
                if level is None:
                    level = by_rank[rank] = Level()
                level.keys.append(key)
                level.sets.append(members)
            found = self._levels[k] = [by_rank[r] for r in sorted(by_rank, reverse=True)]
            for drawn_out in self._drawn_out:
                drawn_out.pop(k, None)
        return found

    def pick(self, k: int, family: int) -> int | None:
        """A random free member of ``family`` (0 awake, 1 asleep) in the best group for class k
        (None: no machine of that family takes it).

        A machine that fell asleep may still be filed as awake: drawn there, it moves to the
        asleep members. Matching draws every awake member of a level before it draws asleep
        ones, so by then the level's sleepers have all moved."""
        free, asleep = self.families[family].live, self.families[1].live
        key_of, draw = self.key_of, self.rand.random
        levels = self._levels.get(k) or self.levels(k)  # once built, no call (a pick per job)
        drawn_out = self._drawn_out[family]
        for at in range(drawn_out.get(k, 0), len(levels)):
            level = levels[at]
            keys, sets = level.keys, level.sets
            one = len(sets) == 1  # one group at this rank, the usual case
            many = len(sets) > FEW_GROUPS
            drawable = level.members(family, self._generation[family]) if many else None
            while True:
                if one:
                    i, items = 0, sets[0][family].items
                    if not items:
                        break
                    m = items[int(draw() * len(items))]
                elif drawable is None:  # a few groups: drawn in proportion to their sizes
                    total = 0  # a loop, not a list of sizes: cheaper for a few
                    for members in sets:
                        total += len(members[family].items)
                    if not total:
                        break
                    r, i = int(draw() * total), 0
                    while r >= len(sets[i][family].items):
                        r -= len(sets[i][family].items)
                        i += 1
                    m = sets[i][family].items[r]
                else:
                    if not drawable:
                        break
                    j = int(draw() * len(drawable))
                    m, i = drawable[j]
                    if key_of.get(m) != keys[i] or m not in free:
                        drawable[j] = drawable[-1]  # not drawable again from this family
                        drawable.pop()
                key, members = keys[i], sets[i]
                if key_of.get(m) == key:
                    if m in free:
                        return m
                    if family == 0 and m in asleep:  # fell asleep since it was filed
                        members[0].discard(m)
                        members[1].add(m)
                        self._drawn_out[1].clear()
                        self._generation[1] += 1
                        continue
                self._forget(m, key, family)
            if levels is self._levels.get(k):  # not rebuilt meanwhile (a group went)
                drawn_out[k] = at + 1
        return None

    def _forget(self, m: int, key: int, family: int) -> None:
        """A drawn member no longer free in ``family`` (a job or its owner took it). A level
        drawn from lists its machines as they were: one forgotten through another class may be
        listed under a group that emptied during this draw and is gone (nothing to forget)."""
        group = self.groups.get(key)
        if group is None:
            return
        members = group[1]
        members[family].discard(m)
        if m in members[1 - family].live:
            return  # still filed in the other family (it is dropped there when drawn)
        if self.key_of.get(m) == key:
            del self.key_of[m]
        if key >= 0 and not members[1 - family].items and not members[family].items:
            self._reranked(key, self.groups.pop(key)[2], KEPT_OFF)
