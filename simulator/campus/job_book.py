"""HTC jobs during a replay: the idle queue, attempts, removals and the energy of every attempt.

An evicted job goes back to the queue and remembers its longest attempt, which classes it for the
advice (``AdvisorRankByPriorHours[k]``; without job edits, ``PoolRules.job_edits``, its last).
Energy of an attempt is its duration times the machine's active power (paper 004 sec. V-F), or on
a pool of shared machines the share the pool charges it (``attempt_wh``); the completing attempt
is good energy, every other is wasted.

Replicas (paper 003 sec. 2.1): a replicable job advised ``replicas = N`` gets N - 1 extra entries
(ids ``<job>#r<i>``) queued beside it; the first entry to complete wins and the others are killed at
once, a user removal kills them all, an evicted replica is re-queued while the job is unfinished.
All their energy is the job's: the winning attempt is good, every other attempt wasted (eq. 1).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np
from sortedcontainers import SortedList

from plugins.contract.advice import PRIOR_HOURS_CLASSES, JobAdvice
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
)
from simulator.campus.idle_jobs import IdleJobs, ranked_class
from simulator.campus.job_states import DONE, HELD, PENDING, QUEUED, REMOVED, RUNNING
from simulator.campus.month_stats import MonthStats
from simulator.campus.replica_entries import add_replicas
from simulator.campus.unadvised import Unadvised
from simulator.engine import Engine
from simulator.trace_model import Jobs

MAX_REPLICAS = 10
INF = float("inf")
# enum members as module constants: ``AttemptOutcome.REMOVED`` is a slow class getattr
COMPLETED, REMOVED_BY_USER = AttemptOutcome.COMPLETED, AttemptOutcome.REMOVED
EVICTION_CAUSE = {AttemptOutcome.EVICTED_OWNER: "owner", AttemptOutcome.EVICTED_REBOOT: "reboot"}
"""The outcomes that send a job back to the queue, by the cause they are counted under."""


class JobBook:
    """Every job's state: the negotiator takes jobs from here, the pool reports attempt ends."""

    def __init__(
        self,
        engine: Engine,
        jobs: Jobs,
        active_watts: list[float],
        machine_names: list[str],
        months: MonthStats,
        emit: Callable[[Event], None] | None,
        on_queued: Callable[[], None],
        job_edits: bool = True,
    ) -> None:
        self.engine = engine
        self.job_edits = job_edits
        self.jobs = jobs
        self.ids = list(jobs.job_id)
        self.runtime = jobs.runtime.tolist()
        self.submit_t = jobs.submit.tolist()
        self.active_watts = active_watts
        self.machine_names = machine_names
        self.months = months
        self.emit, self.on_queued = emit, on_queued
        n = len(jobs)
        self.status, self.attempts, self.machine = [PENDING] * n, [0] * n, [-1] * n  # (last)
        self.class_attempt_s, self.good_wh, self.wasted_wh = [0.0] * n, [0.0] * n, [0.0] * n
        """Per entry, the attempt its class reads: its longest (``AdvisorPriorHours``, a job edit)
        or, without job edits, its last (``LastRemoteWallClockTime``, deploy/common/40)."""
        self.finish, self.started = [float("nan")] * n, [0.0] * n
        self.prior_class = [0] * n
        """Per entry, its prior-hours class while queued (``ranked_class``)."""
        self.queues: list[list[tuple[float, int]]] = [[] for _ in range(PRIOR_HOURS_CLASSES)]
        self.constrained: SortedList = SortedList()
        self.constrained_added = False
        """A job joined ``constrained`` since the negotiator last matched them all."""
        self.advice: dict[int, JobAdvice] = {}
        self.queued_by_class, self.idle_total = [0] * PRIOR_HOURS_CLASSES, 0
        """Jobs in the advised queues by ranked class, and all jobs a cycle may match."""
        self.unadvised = Unadvised()  # jobs past the starvation bound (unadvised.py)
        self.new_jobs: list[int] = []
        self.evictions = {"owner": 0, "reboot": 0}
        self.pool_finish: Callable[[int, int, AttemptOutcome], None] | None = None
        self.attempt_wh: Callable[[int, int], float] | None = None
        """Set by a pool of shared machines: the energy of entry j's attempt on machine m."""
        self.cpus, self.memory = jobs.cpus.tolist(), jobs.memory_mb.tolist()
        self.idle_jobs = IdleJobs(self.cpus)  # every idle job by its class, as the daemon counts
        self.replicable = jobs.replicable.tolist()
        self.parent = list(range(n))
        """Entry -> its job (entries past the trace's jobs are replicas)."""
        self.family: dict[int, list[int]] = {}
        self.replica_in_flight_wh = 0.0

    def _enqueue(self, j: int, entered: float | None = None) -> None:
        advice, now = self.advice.get(j), self.engine.time
        self.idle_jobs.entered(j)
        entered = now if entered is None else entered
        until = self.unadvised.hold_ends(j, advice, entered, now)
        if until is not None or (advice is not None and advice.hold):
            if until is not None:  # AdvisorHoldUntil: queued again when it or the bound ends
                self.engine.at(until, self._hold_ended, (j, entered, advice))
            self.status[j] = HELD
            self.unadvised.held(j, entered)
            return
        self.status[j] = QUEUED
        if self.unadvised.admits(j):
            self.unadvised.add(j, self.submit_t[j])
        elif advice is not None and advice.min_idle_s is not None:
            self.constrained.add((advice.min_idle_s, self.submit_t[j], j))
            self.constrained_added = True
        else:
            k = self.prior_class[j] = ranked_class(self.class_attempt_s[j], advice)
            heapq.heappush(self.queues[k], (self.submit_t[j], j))
            self.queued_by_class[k] += 1
        if j not in self.unadvised.members or j in self.unadvised.control:
            self.unadvised.watch(j, entered)
        self.idle_total += 1
        self.on_queued()

    def _hold_ended(self, arg: tuple[int, float, JobAdvice]) -> None:
        j, entered, advice = arg
        if self.status[j] == HELD and self.advice.get(j) is advice:  # (else a newer hold's)
            self._enqueue(j, entered)

    def _dequeue(self, j: int) -> None:
        """Forget a queued job lazily (heaps keep the entry; pops skip non-queued jobs)."""
        advice = self.advice.get(j)
        if j in self.unadvised.members:
            self.unadvised.left_queue(j)
        elif advice is not None and advice.min_idle_s is not None:
            self.constrained.discard((advice.min_idle_s, self.submit_t[j], j))
        else:
            self.queued_by_class[self.prior_class[j]] -= 1
        self.idle_total -= 1

    def release(self, now: float) -> None:
        """Jobs queued past the starvation bound leave their advised queue (unadvised.py)."""
        for j in self.unadvised.due(now):
            if self.status[j] == QUEUED and not self.unadvised.past_bound(j):
                self._dequeue(j)  # leaves as advised, comes back released
                self.unadvised.release(j)
                self._enqueue(j)

    def submit(self, j: int) -> None:
        now = self.engine.time
        self.new_jobs.append(j)
        self._announce(j, now)
        self.months.add(now, "submitted", 1)
        self._enqueue(j)

    def _announce(self, j: int, now: float) -> None:
        """Report the job idle at its submission and, as a live schedd does, at each eviction."""
        if self.emit is not None:
            user, n, ran = self.jobs.user[self.parent[j]], self.attempts[j], self.idle_jobs.ran_s(j)
            cpus, replicable = self.cpus[j], self.replicable[j]
            self.emit(JobQueued(now, self.ids[j], user, n, ran, replicable=replicable, cpus=cpus))

    def apply_advice(self, advice: dict[str, JobAdvice], index: dict[str, int]) -> None:
        """Per-job advice (a schedd edit live): re-route the job inside the queue; none reaches
        a pool without job edits."""
        if not self.job_edits:
            return
        for job_id, adv in advice.items():
            j = index[job_id]
            queued = self.status[j] == QUEUED
            if queued:
                self._dequeue(j)
            self.advice[j] = adv
            if queued or self.status[j] == HELD:
                self._enqueue(j, self.unadvised.entered.get(j))
            if adv.replicas > 1 and self.replicable[j] and j not in self.family:
                add_replicas(self, j, min(adv.replicas, MAX_REPLICAS))

    def head(self, k: int) -> tuple[float, int] | None:
        """Oldest queued job of class ``k`` (dropping stale heap entries)."""
        queue, status, classes, advice = self.queues[k], self.status, self.prior_class, self.advice
        released = self.unadvised.members
        while queue:
            j = queue[0][1]
            a = advice.get(j) if advice else None
            unconstrained = a is None or a.min_idle_s is None
            if status[j] == QUEUED and classes[j] == k and unconstrained and j not in released:
                return queue[0]
            heapq.heappop(queue)
        return None

    def pop_constrained(self, idle_s: float) -> int | None:
        """The longest job that fits strictly inside ``idle_s`` (Crystal favours long jobs)."""
        pos = self.constrained.bisect_left((idle_s, -np.inf, -1))
        return int(self.constrained[pos - 1][2]) if pos else None

    def start(self, j: int, m: int) -> None:
        now = self.engine.time
        self._dequeue(j)
        self.idle_jobs.left(j)
        self.status[j] = RUNNING
        self.machine[j], self.started[j] = m, now
        self.attempts[j] += 1
        if self.emit is not None:
            self.emit(AttemptStarted(now, self.ids[j], self.machine_names[m]))
        if self.runtime[j] != INF:
            self.engine.at(now + self.runtime[j], self._complete, (j, self.attempts[j]))

    def _complete(self, arg: tuple[int, int]) -> None:
        j, attempt = arg
        if self.status[j] == RUNNING and self.attempts[j] == attempt and self.pool_finish:
            self.pool_finish(self.machine[j], j, COMPLETED)

    def attempt_ended(self, j: int, m: int, outcome: AttemptOutcome) -> None:
        now = self.engine.time
        duration = now - self.started[j]
        energy = self._attempt_wh(j, m, now)
        watts = self.active_watts[m]
        if self.attempt_wh is not None:  # a shared machine: the attempt's mean share
            watts = energy * 3600.0 / duration if duration > 0 else 0.0
        if duration > self.class_attempt_s[j] or not self.job_edits:
            self.class_attempt_s[j] = duration
        p = self.parent[j]  # eq. 1 of paper 003: every replica's energy is its job's
        if outcome is COMPLETED:
            self.good_wh[p] += energy
            self.status[j] = DONE
            self.finish[p] = now
            month = self.months.month(now)
            month["completed"] += 1
            month["good_wh"] += energy
            month["overhead_s"] += now - self.submit_t[p] - self.runtime[p]
        else:
            self.wasted_wh[p] += energy
            self.months.add(now, "wasted_wh", energy)
        if self.emit is not None:
            names, started = self.machine_names, self.started
            self.emit(AttemptEnded(now, self.ids[j], names[m], outcome, started[j], watts))
        cause = EVICTION_CAUSE.get(outcome)
        if cause is not None:
            self.evictions[cause] += 1
            self.months.add(now, f"evictions_{cause}", 1)
            self.idle_jobs.evicted(j, duration)
            self._announce(j, now)
            self._enqueue(j)
        elif outcome is REMOVED_BY_USER:
            self.status[j] = REMOVED
        elif p in self.family:  # the first replica to finish wins: kill the others at once
            for e in self.family.pop(p):
                if e != j:
                    self._withdraw(e)
            self.status[p] = DONE

    def remove(self, j: int) -> None:
        """The user removes a job that has not completed (all of its running attempts wasted)."""
        if self.status[j] in (DONE, REMOVED, PENDING):
            return
        self.months.add(self.engine.time, "removed", 1)
        for e in self.family.pop(j, [j]):
            self._withdraw(e)

    def _withdraw(self, j: int) -> None:
        """End entry ``j`` wherever it is: kill its running attempt, or take it off the queue."""
        status = self.status[j]
        if status == RUNNING and self.pool_finish:
            self.pool_finish(self.machine[j], j, REMOVED_BY_USER)
        elif status in (QUEUED, HELD):
            self.idle_jobs.left(j)
            if status == QUEUED:
                self._dequeue(j)
            self.status[j] = REMOVED
            if self.emit is not None:
                self.emit(JobRemoved(self.engine.time, self.ids[j]))

    def close(self, now: float) -> None:
        """End of replay: fold the replicas into their jobs, so every list is one row per job."""
        n = len(self.jobs)
        self.replica_in_flight_wh = self._running_wh(range(n, len(self.status)), now)
        for column in (
            self.ids, self.runtime, self.submit_t, self.status, self.attempts, self.class_attempt_s,
            self.prior_class, self.good_wh, self.wasted_wh, self.finish, self.machine, self.started,
            self.parent, self.replicable, self.cpus, self.memory,
        ):  # fmt: skip
            del column[n:]

    def in_flight_wh(self, now: float) -> float:
        """Energy of attempts still running when the replay ends (neither good nor wasted)."""
        return self.replica_in_flight_wh + self._running_wh(range(len(self.status)), now)

    def _running_wh(self, entries: range, now: float) -> float:
        status, machine = self.status, self.machine
        return sum(self._attempt_wh(j, machine[j], now) for j in entries if status[j] == RUNNING)

    def _attempt_wh(self, j: int, m: int, now: float) -> float:
        """Energy of entry ``j``'s attempt on ``m`` up to ``now``."""
        if self.attempt_wh is None:
            return (now - self.started[j]) * self.active_watts[m] / 3600.0
        return self.attempt_wh(j, m)
