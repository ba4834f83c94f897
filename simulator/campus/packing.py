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
from itertools import compress

import numpy as np

from plugins.contract.advice import MachineAdvice
from plugins.contract.ledger import AdviceLedger
from simulator.campus.job_book import JobBook
from simulator.campus.queue_heads import advance, oldest_heads
from simulator.campus.shared_pool import SharedPool


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

    def match(self, group: list[int], ledger: AdviceLedger, now: float) -> None:
        pool, book = self.pool, self.book
        # every machine of ``group`` has room: awake ones are offered only while they do
        advice = [ledger.get(m) for m in group]
        keep = [not a.hold for a in advice]
        free, advice = list(compress(group, keep)), list(compress(advice, keep))
        if not free:
            return
        tiebreak = self.rng.random(len(free)).tolist()
        matched: set[int] = set()
        if book.constrained:
            self._match_constrained(free, advice, tiebreak, matched, now, ledger)
        alike = _alike(free, advice, tiebreak, pool)
        orders: dict[int, list[Key]] = {}
        heads = oldest_heads(book)
        while heads:
            _, k = heads[0]
            order = orders.get(k)
            if order is None:
                order = orders[k] = _order(alike, k)
            head = book.head(k)
            assert head is not None
            m = _best(order, matched, partial(pool.fits, head[1]))
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
        self,
        free: list[int],
        advice: list[MachineAdvice],
        tiebreak: list[float],
        matched: set[int],
        now: float,
        ledger: AdviceLedger,
    ) -> None:
        pool, book = self.pool, self.book
        ranked = sorted(
            (-a.rank, pool.free_cores[m], pool.free_memory[m], tiebreak[i], m)
            for i, (m, a) in enumerate(zip(free, advice, strict=True))
        )
        for *_, m in ranked:
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
