"""Matchmaking as the negotiator does it with the expressions shipped in ``deploy/``.

Each cycle (every ``interval`` seconds while something changed) the policy is asked for advice on
the machines that could take a job, then idle jobs are matched oldest first:

- awake free machines first; sleeping machines only for jobs still idle (condor_rooster wakes them);
- machines with ``AdvisorHold`` are skipped;
- a job of prior-hours class k takes the free machine with the highest
  ``AdvisorRankByPriorHours[k]`` (else ``AdvisorRank``), ties broken at random (the default
  negotiator order is effectively random, paper 000 sec. 7); a negative rank keeps class-k jobs
  off the machine (the START fragment);
- jobs with per-job ``min_idle_s`` advice only match machines whose ``AdvisorPredictedIdle`` exceeds
  it, the longest such job first (``JobPrio``), on machines in rank order.

Advice is asked for incrementally, as a live daemon refreshes it: each cycle only for candidate
machines that changed since the last cycle or whose advice lapsed (its ``expires``, else the
configured lifetime); everything else keeps the advice it was last given, and a machine asked
about but left out of the answer keeps the name it follows (its view says which). For a policy that
``ASKS_ONLY_WHEN_FREED``, a machine that only fell asleep, woke or rebooted while free keeps its
advice too. Machines following a named advice carry its latest value (``Advice.shared``), neutral
while the names are lapsed; they are not asked again when they lapse.
"""

from __future__ import annotations

import heapq
import random
import time
from array import array

import numpy as np

from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, MachineAdvice
from plugins.contract.ledger import AdviceLedger
from plugins.contract.policy import MachineView
from simulator.campus.advice_groups import AdviceGroups
from simulator.campus.advice_source import AdviceSource
from simulator.campus.job_book import JobBook
from simulator.campus.packing import Packer
from simulator.campus.pool import CampusPool
from simulator.campus.queue_heads import advance, oldest_heads
from simulator.campus.shared_pool import SharedPool
from simulator.campus.unadvised import in_arm, interleave
from simulator.engine import Engine


class Negotiator:
    def __init__(
        self,
        engine: Engine,
        pool: CampusPool,
        book: JobBook,
        source: AdviceSource,
        rng: np.random.Generator,
        job_index: dict[str, int],
        interval: float = 60.0,
    ) -> None:
        self.engine = engine
        self.pool = pool
        self.book = book
        self.source = source
        self.rng = rng
        self.job_index = job_index
        self.interval = interval
        self.ledger = source.ledger
        self.scheduled = False
        self.next_cycle = 0.0
        self.cycles = 0
        self.matches = 0
        rand = random.Random(repr(rng.bit_generator.state))  # draws nothing from rng
        self.groups = AdviceGroups((pool.free_awake, pool.sleeping), rand, self._shared_value)
        self.packer = None
        if isinstance(pool, SharedPool):  # partitionable machines: packing.py matches
            self.packer = Packer(pool, book, rng, self._start, pool.rules.claim_leftovers)
        self._view_of: dict[int, MachineView] = {}
        self.advise_s = array("d")
        """Wall time of every answer, decoding included (the decision latency ``bench`` reports)."""

    def request(self) -> None:
        """Something changed: run a cycle at the next negotiation tick."""
        t = -(-self.engine.time // self.interval) * self.interval
        if not self.scheduled or t < self.next_cycle:  # ``_schedule``'s test: millions a year
            self._schedule(t)

    def _schedule(self, t: float) -> None:
        """Run a cycle at ``t`` unless one is due sooner (a later one is superseded)."""
        if self.scheduled and self.next_cycle <= t:
            return
        self.scheduled = True
        self.next_cycle = t
        self.engine.at(t, self.cycle, t)

    def cycle(self, due: object = None) -> None:
        if due is not None and due != self.next_cycle:
            return  # superseded by an earlier cycle
        self.scheduled = False
        pool, book = self.pool, self.book
        if book.idle_total == 0 or not (pool.free_awake.items or pool.sleeping.items):
            return
        self.cycles += 1
        now = self.engine.now()
        fresh = self._refresh_advice(now)
        if book.unadvised.bound_s is not None and not self.ledger.empty():
            book.release(now)
        for family, group in enumerate((pool.free_awake, pool.sleeping)):
            if book.idle_total == 0:
                break
            if not group.items:
                continue
            # Jobs without advice (released, control) draw machines at random in their turn
            # (unadvised.py). Between them, partitionable machines pack (packing.py). Single: no
            # advice draws machines as without the advisor (random's own stream, which
            # reproduced the papers); a minimum idle time needs each machine's remaining idle
            # time; otherwise advice groups.
            shared = self.pool.fits if isinstance(self.pool, SharedPool) else None
            fits = in_arm(book.unadvised, self.ledger, shared)  # with a control group: its arm
            for _ in interleave(book.unadvised, group, self.rng, fits, self._start):
                if self.packer is not None:
                    self.packer.match(family, self.ledger, self.groups, now)
                elif self.ledger.empty():
                    self._match_neutral(group)
                elif book.constrained:
                    self._match_ranked(list(group), fresh, now)
                else:
                    self._match_grouped(family)
        book.constrained_added = False
        kept_off = book.idle_total - len(book.constrained)
        wake = [t for t in (self.ledger.next_expiry(), book.unadvised.next_due()) if t is not None]
        if kept_off and wake and (pool.free_awake.items or pool.sleeping.items):
            # Advice kept jobs off free machines: until something changes, advice lapses or a
            # job reaches its bound, every further cycle would match nothing.
            self._schedule(max(min(wake), now + self.interval))

    def _refresh_advice(self, now: float) -> set[int]:
        """Ask the source about changed or lapsed candidates; return the machines re-advised."""
        if self.source.ledger is not self.ledger:
            self._adopt(self.source.ledger)
        pool, book, ledger = self.pool, self.book, self.ledger
        stale, kept = pool.changed, set()
        if self.source.ASKS_ONLY_WHEN_FREED:
            stale, kept = pool.freed, pool.changed - pool.freed
        stale.update(ledger.expire(now))
        machines, asked = self._views(stale)
        pool.changed, pool.freed = set(), set()
        view = book.idle_jobs.pool_view(machines, [book.ids[j] for j in book.new_jobs])
        book.new_jobs.clear()
        began = time.perf_counter()
        answer = self.source.resolve(view, asked, now)
        self.advise_s.append(time.perf_counter() - began)
        self.groups.apply(answer.taken)
        if kept:
            # asleep ones too: no awake matching (none free) would draw them (robust-policies.md)
            free = pool.free_awake.live, pool.sleeping.live  # no union: kept is the few
            self._keep(sorted(m for m in kept - stale if m in free[0] or m in free[1]))
        if answer.jobs:
            book.apply_advice(answer.jobs, self.job_index)
        return stale

    def _adopt(self, ledger: AdviceLedger) -> None:
        """Read advice from ``ledger`` from now on (in the twin: the daemon took over from the
        re-simulation, changed policy, or stopped publishing). Every free machine is filed anew
        by what it carries there and asked about again."""
        pool = self.pool
        self.ledger = ledger
        self.groups = AdviceGroups(self.groups.families, self.groups.rand, self._shared_value)
        free = sorted(pool.free_awake.live | pool.sleeping.live)
        self.groups.refile(free, list(map(ledger.filed, free)))
        pool.changed.update(free)
        pool.freed.update(free)  # asked even by a policy that is asked only about freed ones

    def _views(self, stale: set[int]) -> tuple[list[MachineView], list[int]]:
        """The candidates among ``stale`` as the policy sees them, and their numbers.

        A view is reused while its machine's state and free time stay the same (views are
        frozen): a lapse re-asks about free machines unchanged."""
        pool, views, follows = self.pool, self._view_of, self.ledger.follows
        awake, asleep = pool.free_awake.live, pool.sleeping.live
        names, since, cores, memory = pool.names, pool.free_since, pool.free_cores, pool.free_memory
        machines, asked = [], []
        for m in stale:
            if m in awake:
                state = "idle"
            elif m in asleep:
                state = "sleep"
            else:
                continue
            mv, name = views.get(m), follows.get(m)
            if (
                mv is None
                or mv.state != state
                or mv.free_since != since[m]
                or mv.follows != name
                or mv.free_cores != cores[m]
                or mv.free_memory_mb != memory[m]
            ):
                mv = MachineView(names[m], state, since[m], name, cores[m], memory[m])
                views[m] = mv
            machines.append(mv)
            asked.append(m)
        return machines, asked

    def _shared_value(self, name: str) -> MachineAdvice:
        """A name's value (neutral while it is lapsed)."""
        entry = self.ledger.named(name)
        return NEUTRAL_MACHINE_ADVICE if entry is None or not self.ledger.names_live else entry[0]

    def _keep(self, machines: list[int]) -> None:
        """Machines still free with the advice they had, filed in the family they are in now."""
        self.groups.refile(machines, list(map(self.ledger.filed, machines)))

    def _match_grouped(self, family: int) -> None:
        """Oldest job first onto a random machine of the family (0 awake, 1 asleep) in the
        best-ranked advice group for its class."""
        groups = self.groups
        heads = oldest_heads(self.book, groups.levels)
        while heads:
            _, k = heads[0]
            m = groups.pick(k, family)
            if m is None:
                heapq.heappop(heads)
                continue
            head = self.book.head(k)
            assert head is not None
            self._start(head[1], m)
            advance(self.book, heads, k)

    def _start(self, j: int, m: int) -> None:
        self.book.start(j, m)
        self.pool.start_job(m, j)
        self.matches += 1

    def _match_neutral(self, group: object) -> None:
        """No advice anywhere: oldest jobs first onto machines drawn uniformly at random."""
        book = self.book
        machines = group.sample(self.rng, book.idle_total)  # type: ignore[attr-defined]
        heads = oldest_heads(self.book)
        for m in machines:
            if not heads:
                return
            _, k = heads[0]
            head = book.head(k)
            assert head is not None
            self._start(head[1], m)
            advance(self.book, heads, k)

    def _match_ranked(self, group: list[int], fresh: set[int], now: float) -> None:
        ledger = self.ledger
        free = [m for m in group if not ledger.get(m).hold]
        if not free:
            return
        tiebreak = self.rng.random(len(free))
        used: set[int] = set()
        if self.book.constrained:
            # Without new constrained jobs only re-advised machines can fit one: the others'
            # remaining idle time has only shrunk since they last failed to.
            scan = free if self.book.constrained_added else [m for m in free if m in fresh]
            self._match_constrained(scan, used, now)
        orders: dict[int, list[int]] = {}
        cursor: dict[int, int] = {}
        heads = oldest_heads(self.book)
        while heads:
            _, k = heads[0]
            order = orders.get(k)
            if order is None:
                ranked = sorted(
                    (-ledger.get(m).rank_for(k), tiebreak[i], m) for i, m in enumerate(free)
                )
                order = orders[k] = [m for r, _, m in ranked if r <= 0]
                cursor[k] = 0
            i = cursor[k]
            while i < len(order) and order[i] in used:
                i += 1
            cursor[k] = i + 1
            if i >= len(order):
                heapq.heappop(heads)
                continue
            head = self.book.head(k)
            assert head is not None
            used.add(order[i])
            self._start(head[1], order[i])
            advance(self.book, heads, k)

    def _match_constrained(self, free: list[int], used: set[int], now: float) -> None:
        ledger = self.ledger
        tiebreak = self.rng.random(len(free))
        ranked = sorted((-ledger.get(m).rank, tiebreak[i], m) for i, m in enumerate(free))
        for _, _, m in ranked:
            idle = ledger.remaining_idle(m, now)
            if idle is None:
                continue
            j = self.book.pop_constrained(idle)
            if j is not None:
                used.add(m)
                self._start(j, m)
                if not self.book.constrained:
                    return
