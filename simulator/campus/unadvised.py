"""Jobs matched as without advice: those the advice kept waiting past the starvation bound, and
the control group.

A job still idle ``bound_s`` after it entered the queue (its submission or its last eviction:
``EnteredCurrentStatus``) is released (``ADVISOR_WAIT_BOUND`` in ``deploy/common/40``: its advice
terms turn neutral): for the rest of this wait it is matched as on a pool without the advisor,
oldest first onto a free machine drawn at random, awake ones first, holds and negative ranks
ignored. Its next wait, after an eviction, is advised again: the bound limits each wait, so a
job requeued long after its submission keeps its advice. Advice keeps jobs
waiting only where the policy advises: a pool without any advice (random placement) releases
nothing, so its own random stream is untouched. A control job (``ADVISOR_CONTROL``, its arm
decided by its id in ``plugins/contract/control.py``) is such a job from its submission. As the
negotiator offers every job in its turn (the schedd's ``QDate`` order), released and control jobs
take their machines in age order among the advised ones (``interleave``): neither arm jumps the
queue of the other, and a job evicted long after its submission keeps its place.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator
from typing import Any

from plugins.contract.advice import JobAdvice
from plugins.contract.control import CONTROL
from plugins.contract.ledger import AdviceLedger
from simulator.indexed_set import IndexedSet

NO_CUTOFF = (math.inf, 0)


class Unadvised:
    """The released jobs: those queued now (oldest first) and every one ever released."""

    def __init__(self, bound_s: float | None = None) -> None:
        self.bound_s = bound_s
        self.queue: list[tuple[float, int]] = []
        self.members: set[int] = set()
        """Unadvised entries queued now."""
        self.waiting: set[int] = set()
        """Entries past the bound in their current wait (until they start or leave the queue):
        released from their advice, a control job from its arm (``in_arm``)."""
        self.released: set[int] = set()
        """Every entry released in the replay (reported per job)."""
        self.ages: list[tuple[float, int]] = []
        """Advised queued entries by when they entered the queue, for the bound (lazy: an
        entry whose job left or entered again is skipped by ``entered``)."""
        self.entered: dict[int, float] = {}
        """When each watched entry entered the queue this time."""
        self.control: set[int] = set()
        """The control group's jobs (empty: no control group)."""
        self.before = NO_CUTOFF
        """Advised jobs are matched only while their (submit time, entry) is below this, as
        the schedd offers jobs by ``QDate``, then job id (``interleave``)."""

    def admits(self, j: int) -> bool:
        return j in self.waiting or j in self.control

    def past_bound(self, j: int) -> bool:
        """Whether a queued entry whose bound passed needs no release: a control job (matched
        without advice already) is only freed from its arm, a released one is released."""
        if j in self.control:
            self.waiting.add(j)
        return j in self.members

    def release(self, j: int) -> None:
        self.waiting.add(j)
        self.released.add(j)

    def hold_ends(
        self, j: int, advice: JobAdvice | None, entered: float, now: float
    ) -> float | None:
        """When entry ``j``, kept off by ``AdvisorHoldUntil`` in a wait that began at ``entered``,
        may match again: at the hold's end or at the bound, whichever comes first (a control
        job ignores it as all advice: ADVISOR_ALLOWS, deploy/common/40); None: it may now."""
        if advice is None or advice.hold_until is None or self.admits(j):
            return None
        until = advice.hold_until
        if self.bound_s is not None:
            until = min(until, entered + self.bound_s)
        return until if until > now else None

    def left_queue(self, j: int) -> None:
        """The entry started or left the queue: its next wait is advised again."""
        self.members.discard(j)
        self.waiting.discard(j)

    def add(self, j: int, submit_t: float) -> None:
        heapq.heappush(self.queue, (submit_t, j))
        self.members.add(j)

    def watch(self, j: int, now: float) -> None:
        """An advised job entered the queue: released once it has waited ``bound_s``."""
        if self.bound_s is not None:
            self.entered[j] = now
            heapq.heappush(self.ages, (now, j))

    def held(self, j: int, entered: float) -> None:
        """An entry kept off by advice goes on waiting (as its ``EnteredCurrentStatus`` does):
        its wait began at ``entered``, whenever advice lets it into the queue."""
        if self.bound_s is not None:
            self.entered[j] = entered

    def due(self, now: float) -> Iterator[int]:
        """Entries whose bound has passed (the caller checks they are still queued)."""
        ages, bound = self.ages, self.bound_s
        while ages and bound is not None and ages[0][0] + bound <= now:
            t, j = heapq.heappop(ages)
            if self.entered.get(j) == t:
                yield j

    def next_due(self) -> float | None:
        """When the next watched job reaches its bound (perhaps one that already left)."""
        return self.ages[0][0] + self.bound_s if self.ages and self.bound_s is not None else None

    def oldest(self) -> list[int]:
        """The released jobs queued now, oldest first (stale and repeated entries dropped; a
        sorted list is a heap)."""
        self.queue = sorted({(t, j) for t, j in self.queue if j in self.members})
        return [j for _, j in self.queue]


def in_arm(
    unadvised: Unadvised, ledger: AdviceLedger, fits: Callable[[int, int], bool] | None
) -> Callable[[int, int], bool] | None:
    """Which machines an unadvised job may take: any that ``fits`` it, and with a control group
    only those of its arm while their advice names one, until its wait passes the bound
    (``ADVISOR_ARM_OK``, machine_split.py)."""
    control, past_bound = unadvised.control, unadvised.waiting
    if not control:
        return fits

    def fits_arm(j: int, m: int) -> bool:
        arm = ledger.get(m).arm
        ok = arm is None or j in past_bound or (arm == CONTROL) == (j in control)
        return ok and (fits is None or fits(j, m))

    return fits_arm


def interleave(
    unadvised: Unadvised,
    group: IndexedSet,
    rng: Any,
    fits: Callable[[int, int], bool] | None,
    start: Callable[[int, int], None],
) -> Iterator[None]:
    """Yield whenever the caller should match the advised jobs submitted before
    ``unadvised.before``; in between, each queued unadvised job, oldest first, takes a machine
    of ``group`` drawn at random. A released job is not always older than the advised ones: a
    job evicted long after its submission keeps its ``QDate`` but waits anew, advised, and the
    schedd offers it before the younger jobs the bound released (as a control job)."""
    unadvised.oldest()
    try:
        for t, j in list(unadvised.queue):
            unadvised.before = (t, j)
            yield
            if not group.items:
                return
            if fits is None:
                start(j, group.items[int(rng.integers(len(group.items)))])
            else:
                m = next((m for m in group.sample(rng, len(group.items)) if fits(j, m)), None)
                if m is not None:
                    start(j, m)
        unadvised.before = NO_CUTOFF
        yield
    finally:
        unadvised.before = NO_CUTOFF
