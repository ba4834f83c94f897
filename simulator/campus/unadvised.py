"""Jobs matched as without advice: those the advice kept waiting past the starvation bound.

A job still idle ``bound_s`` after its submission is released (``ADVISOR_WAIT_BOUND`` in
``deploy/common/40``: its advice terms turn neutral): from then on, its attempts and re-queues
included, it is matched as on a pool without the advisor, oldest first onto a free machine drawn
at random, awake ones first, holds and negative ranks ignored. Advice keeps jobs waiting only
where the policy advises: a pool without any advice (random placement) releases nothing, so its
own random stream is untouched.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from typing import Any

from simulator.indexed_set import IndexedSet


class Unadvised:
    """The released jobs: those queued now (oldest first) and every one ever released."""

    def __init__(self, bound_s: float | None = None) -> None:
        self.bound_s = bound_s
        self.queue: list[tuple[float, int]] = []
        self.members: set[int] = set()
        """Released entries queued now."""
        self.released: set[int] = set()
        """Every entry released in the replay (reported per job)."""
        self.ages: list[tuple[float, int]] = []
        """Advised queued entries by submit time, for the bound (lazy: stale entries stay)."""

    def admits(self, j: int) -> bool:
        return j in self.released

    def add(self, j: int, submit_t: float) -> None:
        heapq.heappush(self.queue, (submit_t, j))
        self.members.add(j)

    def watch(self, j: int, submit_t: float) -> None:
        """An advised job entered the queue: released once it has waited ``bound_s``."""
        if self.bound_s is not None:
            heapq.heappush(self.ages, (submit_t, j))

    def due(self, now: float) -> Iterator[int]:
        """Entries whose bound has passed (the caller checks they are still queued)."""
        ages, bound = self.ages, self.bound_s
        while ages and bound is not None and ages[0][0] + bound <= now:
            yield heapq.heappop(ages)[1]

    def next_due(self) -> float | None:
        """When the next watched job reaches its bound (perhaps one that already left)."""
        return self.ages[0][0] + self.bound_s if self.ages and self.bound_s is not None else None

    def oldest(self) -> list[int]:
        """The released jobs queued now, oldest first (stale and repeated entries dropped; a
        sorted list is a heap)."""
        self.queue = sorted({(t, j) for t, j in self.queue if j in self.members})
        return [j for _, j in self.queue]


def match_unadvised(
    unadvised: Unadvised,
    group: IndexedSet,
    rng: Any,
    fits: Callable[[int, int], bool] | None,
    start: Callable[[int, int], None],
) -> None:
    """Released jobs oldest first, each onto a machine of ``group`` drawn at random that fits
    it (one match per machine per cycle, as the negotiator gives one slot one match)."""
    jobs = unadvised.oldest()
    if not jobs or not group.items:
        return
    machines = group.sample(rng, len(jobs) if fits is None else len(group.items))
    used: set[int] = set()
    for j in jobs:
        m = next((m for m in machines if m not in used and (fits is None or fits(j, m))), None)
        if m is None:
            continue
        used.add(m)
        start(j, m)
