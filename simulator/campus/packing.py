"""Matchmaking on a pool with partitionable machines (docs/slots.md), as a default HTCondor 25
negotiator and schedd do it:

- a job matches a machine whose remaining cores and memory cover its request (a single machine:
  one that runs no job);
- machines rank by their advice as on a single pool (``AdvisorRankByPriorHours[k]``, else
  ``AdvisorRank``; ``AdvisorHold`` and a negative rank keep jobs off), then by the default
  ``NEGOTIATOR_PRE_JOB_RANK``'s best fit: fewest free cores, then least free memory; remaining
  ties at random. Without advice, jobs therefore pack as the default negotiator packs them;
- the negotiator matches each partitionable slot at most once per cycle, ranking the slot ads as
  they were when the cycle began (no consumption policy). With ``CLAIM_PARTITIONABLE_LEFTOVERS``
  (true by default) the schedd then carves further dynamic slots from what is left, for its
  oldest idle job of each class that fits and that the machine's advice lets in, until none
  does. ``leftovers=False`` leaves one job per machine per cycle;
- a class whose oldest job fits no machine waits this cycle (jobs of one class are one
  autocluster here: the campus's jobs differ in length, not in requests);
- jobs with a per-job minimum idle time (the crystal oracle) are matched first, machines in rank
  order, each taking the longest jobs that fit both its remaining idle time and its room.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from functools import partial
from typing import Protocol

import numpy as np

from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, MachineAdvice
from plugins.contract.ledger import AdviceLedger
from simulator.campus.advice_groups import AdviceGroups
from simulator.campus.job_book import JobBook
from simulator.campus.queue_heads import advance, oldest_heads
from simulator.campus.shared_pool import SharedPool


class Ranking(Protocol):
    def best(self, k: int, j: int, matched: set[int]) -> int | None:
        """The best machine not ``matched`` yet for job ``j`` of class ``k`` (None: none fits)."""


class Packer:
    """One cycle's matching on one family of machines (awake, then asleep)."""

    def __init__(
        self,
        pool: SharedPool,
        book: JobBook,
        rng: np.random.Generator,
        start: Callable[[int, int], None],
        leftovers: bool = True,
    ) -> None:
        self.pool, self.book, self.rng, self.start = pool, book, rng, start
        self.leftovers = leftovers

    def match(self, family: int, ledger: AdviceLedger, groups: AdviceGroups, now: float) -> None:
        """Match idle jobs, oldest first, onto ``family`` (0 awake, 1 asleep). Machines are
        ranked through the advice groups the negotiator keeps up to date, at a cost that grows
        with the machines a job's class ranks first, not with every free machine; jobs with a
        minimum idle time, and a pool without advice, rank this cycle's machines afresh."""
        pool, book = self.pool, self.book
        matched: set[int] = set()
        ranking: Ranking
        if book.constrained or ledger.empty():
            # every machine of the family has room: awake ones are offered only while they do
            free = list((pool.free_awake, pool.sleeping)[family])
            advice = [ledger.get(m) for m in free] if book.constrained else None
            ranking = ScannedRanking(pool, free, advice, self.rng.random(len(free)).tolist())
            if book.constrained:
                self._match_constrained(ranking, matched, now, ledger)
            heads = oldest_heads(book)
        else:
            ranking = GroupedRanking(pool, groups, family)
            heads = oldest_heads(book, groups.levels)
        while heads:
            _, k = heads[0]
            head = book.head(k)
            assert head is not None
            m = ranking.best(k, head[1], matched)
            if m is None:
                heapq.heappop(heads)  # its oldest job fits nowhere this cycle
                continue
            matched.add(m)
            self.start(head[1], m)
            advance(book, heads, k)
            if self.leftovers:
                self._fill(m, heads, ledger)

    def _fill(self, m: int, heads: list[tuple[float, int]], ledger: AdviceLedger) -> None:
        """The schedd claims the leftover of ``m`` for its oldest jobs that fit there."""
        pool, book, advice = self.pool, self.book, ledger.get(m)
        while heads and pool.has_room(m):
            for _, k in sorted(heads):
                head = book.head(k)
                assert head is not None
                if advice.rank_for(k) >= 0 and pool.fits(head[1], m):
                    self.start(head[1], m)
                    advance(book, heads, k)
                    break
            else:
                return

    def _match_constrained(
        self, ranking: ScannedRanking, matched: set[int], now: float, ledger: AdviceLedger
    ) -> None:
        pool, book = self.pool, self.book
        for m in ranking.by_rank():
            idle = ledger.remaining_idle(m, now)
            while idle is not None and pool.has_room(m):
                j = book.pop_constrained(idle)
                if j is None or not pool.fits(j, m):
                    break
                matched.add(m)
                self.start(j, m)
                if not self.leftovers:
                    break
            if not book.constrained:
                return


class GroupedRanking:
    """The machines of the best advice level for a class that fit the job, best fit first, then
    at random. A level lists members filed awake or asleep that may since have been taken, woken
    or fallen asleep (``AdviceGroups`` drops them lazily): a member counts where it is now."""

    def __init__(self, pool: SharedPool, groups: AdviceGroups, family: int) -> None:
        self.pool, self.groups, self.family = pool, groups, family

    def best(self, k: int, j: int, matched: set[int]) -> int | None:
        pool, free, key_of = self.pool, self.groups.families[self.family].live, self.groups.key_of
        cores, memory, fits = pool.free_cores, pool.free_memory, pool.fits
        for level in self.groups.levels(k):
            fit: tuple[int, float] | None = None
            ties: list[int] = []
            for key, members in zip(level.keys, level.sets, strict=True):
                for filed in members:
                    for m in filed.items:
                        if m in matched or m not in free or key_of.get(m) != key:
                            continue
                        here = (cores[m], memory[m])
                        if (fit is not None and here > fit) or not fits(j, m):
                            continue
                        if here == fit:
                            ties.append(m)
                        else:
                            fit, ties = here, [m]
            if ties:
                return (
                    ties[int(self.groups.rand.random() * len(ties))] if len(ties) > 1 else ties[0]
                )
        return None


class ScannedRanking:
    """This cycle's machines ranked afresh: by their advice (``None``: none, all alike), then
    best fit, then a random tiebreak."""

    def __init__(
        self,
        pool: SharedPool,
        free: list[int],
        advice: list[MachineAdvice] | None,
        tiebreak: list[float],
    ) -> None:
        self.pool, self.free, self.tiebreak = pool, free, tiebreak
        self.advice = advice or [NEUTRAL_MACHINE_ADVICE] * len(free)
        self.alike = _alike(free, self.advice, tiebreak, pool)
        self.orders: dict[int, list[Key]] = {}

    def by_rank(self) -> list[int]:
        """Machines not held, by their advice's rank, then best fit, then chance."""
        pool = self.pool
        ranked = sorted(
            (-a.rank, pool.free_cores[m], pool.free_memory[m], self.tiebreak[i], m)
            for i, (m, a) in enumerate(zip(self.free, self.advice, strict=True))
            if not a.hold
        )
        return [key[-1] for key in ranked]

    def best(self, k: int, j: int, matched: set[int]) -> int | None:
        order = self.orders.get(k)
        if order is None:
            order = self.orders[k] = _order(self.alike, k)
        return _best(order, matched, partial(self.pool.fits, j))


Fit = tuple[int, float, float, int]
"""A machine's best-fit place: free cores, free memory, tie-break, its number."""
Key = tuple[float, int, float, float, int]
"""Its place for one class: minus its rank, then its ``Fit``."""
Alike = list[tuple[MachineAdvice, list[Fit]]]


def _alike(
    free: list[int], advice: list[MachineAdvice], tiebreak: list[float], pool: SharedPool
) -> Alike:
    """The machines grouped by the advice object they carry (a policy advising per cluster
    hands out a few dozen), each with its best-fit key: a class ranks groups, not machines."""
    groups: dict[int, tuple[MachineAdvice, list[Fit]]] = {}
    cores, memory = pool.free_cores, pool.free_memory
    for i, (m, a) in enumerate(zip(free, advice, strict=True)):
        if a.hold:
            continue
        group = groups.get(id(a))
        if group is None:
            group = groups[id(a)] = (a, [])
        group[1].append((cores[m], memory[m], tiebreak[i], m))
    return list(groups.values())


def _order(alike: Alike, k: int) -> list[Key]:
    """A heap of the machines that take class-k jobs, best first: advice, best fit, chance."""
    heap: list[Key] = []
    for advice, fits in alike:
        rank = advice.rank_for(k)
        if rank >= 0:  # a negative rank keeps class k off (the START fragment)
            heap.extend((-rank, c, mem, tb, m) for c, mem, tb, m in fits)
    heapq.heapify(heap)
    return heap


def _best(order: list[Key], matched: set[int], fits: Callable[[int], bool]) -> int | None:
    """Take the best machine of ``order`` not matched yet that ``fits``; machines that do not
    fit this job stay for the next."""
    skipped: list[Key] = []
    found = None
    while order:
        m = order[0][-1]
        if m in matched:
            heapq.heappop(order)  # matched machines are done for this cycle
        elif fits(m):
            found = m
            heapq.heappop(order)
            break
        else:
            skipped.append(heapq.heappop(order))
    for key in skipped:
        heapq.heappush(order, key)
    return found
