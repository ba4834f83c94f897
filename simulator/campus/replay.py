"""Replay a trace under a policy: trace streams -> pool and jobs -> events -> policy -> advice ->
negotiator. The returned ``ReplayResult`` carries everything the summary and ``jobs.csv`` need.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from plugins.contract.clock import next_reboot
from plugins.contract.control import CONTROL, arm_of, of_control_job
from plugins.contract.events import (
    ALL_EVENT_KINDS,
    ALL_POWER_STATES,
    AttemptOutcome,
    Event,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.machine_split import MachineSplit
from plugins.contract.policy import MachineInfo, Policy, PolicyContext
from plugins.contract.registry import policy_for
from plugins.power.base import PowerPolicy
from simulator.campus.advice_source import AdviceSource, Answering, AskedPolicy
from simulator.campus.job_book import JobBook
from simulator.campus.month_stats import MonthStats, month_starts
from simulator.campus.negotiator import Negotiator
from simulator.campus.oracle import TraceOracle
from simulator.campus.pool import CampusPool
from simulator.campus.power import CampusPower
from simulator.campus.rules import CAMPUS_REBOOT_HOUR, PoolRules
from simulator.campus.shared_pool import SharedPool
from simulator.engine import Engine
from simulator.quiet_gc import fewer_collections
from simulator.trace_model import DAY, PARTITIONABLE, Trace

MACHINE_EVENTS = frozenset({OwnerSessionStarted, OwnerSessionEnded, MachinePowerChanged})


@dataclass
class ReplayResult:
    policy: str
    trace: Trace
    pool: CampusPool
    book: JobBook
    months: MonthStats
    negotiator: Negotiator
    events: int
    wall_s: float
    cpu_s: float
    """CPU time of the replay itself (the trace already built or read)."""


def machine_infos(trace: Trace) -> dict[str, MachineInfo]:
    return {
        m.name: MachineInfo(
            m.name, m.cluster, m.mtype, m.active_watts, m.idle_watts, m.sleep_watts, m.jobs_at_once
        )
        for m in trace.inventory.machines
    }


def build_policy(
    name: str,
    trace: Trace,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    parallel_map: Callable[..., Any] | None = None,
    reboot_hour: float | None = CAMPUS_REBOOT_HOUR,
) -> Policy:
    """Instantiate a registered policy for this trace (oracles get the trace's future);
    ``parallel_map`` lets a learning policy fit its models in worker processes;
    ``reboot_hour`` is the pool's, as the replay's ``PoolRules`` say."""
    cls = policy_for(name, "campus")
    context = PolicyContext(
        machines=machine_infos(trace),
        seed=seed,
        reboot_hour=reboot_hour,
        terms=trace.terms,
        parallel_map=parallel_map,
    )
    if cls.NEEDS_ORACLE:
        context.oracle = TraceOracle(trace, reboot_hour)
    return cls(context, options)


def _pairs(times: np.ndarray, args: np.ndarray) -> Iterator[tuple[float, Any]]:
    order = np.argsort(times, kind="stable")
    return zip(times[order].tolist(), args[order].tolist(), strict=True)


def _emitter(policy: Policy, kinds: frozenset[type]) -> Callable[[Event], None] | None:
    wanted = policy.WANTS & kinds
    if not wanted:
        return None
    observe = policy.observe
    if wanted == kinds:
        return observe  # wants them all: no filter in between (a million calls a month)

    def emit(event: Event) -> None:
        if type(event) in wanted:
            observe(event)

    return emit


def _schedule_retraining(engine: Engine, policy: Policy, trace: Trace) -> None:
    """``policy.retrain(t)`` at each month boundary inside the replay (a no-op for most)."""
    boundaries = [t for t in month_starts(trace.start, trace.end) if trace.start < t < trace.end]
    for t in boundaries:
        engine.at(t, policy.retrain, t)


@dataclass
class _Listener:
    """What the pool tells about: an attempt ended (to the jobs), a machine is free (to the
    negotiator)."""

    attempt_ended: Callable[[int, int, AttemptOutcome], None]
    machine_freed: Callable[[], None]


@dataclass
class World:
    """The simulated pool assembled from a trace, ready for ``engine.run``."""

    engine: Engine
    pool: CampusPool
    book: JobBook
    months: MonthStats
    negotiator: Negotiator
    power: CampusPower | None = None
    """Applies a power policy's advice to the pool (None for other policies)."""

    def close(self, now: float) -> None:
        """End the run: close open machine states and fold replicated jobs into one row each."""
        self.pool.close()
        self.book.close(now)


def build_world(
    trace: Trace,
    advisor: Answering | AdviceSource,
    seed: int,
    rules: PoolRules,
    negotiation_interval: float,
    emit_machine: Callable[[Event], None] | None,
    emit_job: Callable[[Event], None] | None,
    wants: frozenset[type] = ALL_EVENT_KINDS,
    power_states: frozenset[PowerState] = ALL_POWER_STATES,
) -> World:
    """Engine, pool, jobs and negotiator with the trace fed in; the negotiator asks ``advisor``.
    ``emit_machine`` gets the machine events in ``wants`` (power changes to ``power_states``).

    The replay passes the policy itself (asked directly; a power policy through the minute tick
    that applies its advice); the digital twin passes its daemon cycle.
    """
    engine = Engine(trace.start)
    months = MonthStats(trace.start, trace.end)
    inv = trace.inventory
    names = [m.name for m in inv.machines]

    def nothing_to_match() -> None:
        """Until the negotiator is built nobody waits for free machines or queued jobs."""

    book = JobBook(
        engine,
        trace.jobs,
        [m.active_watts for m in inv.machines],
        names,
        months,
        emit_job,
        nothing_to_match,
        rules.job_edits,
    )
    listener = _Listener(book.attempt_ended, nothing_to_match)
    pool: CampusPool
    if any(m.slots == PARTITIONABLE for m in inv.machines):
        shared = SharedPool(
            engine, inv, rules, listener, emit_machine, book.cpus, book.memory, wants, power_states
        )
        book.attempt_wh, pool = shared.attempt_wh, shared
    else:
        pool = CampusPool(engine, inv, rules, listener, emit_machine, wants, power_states)
    book.pool_finish = pool.finish_job
    rng = np.random.default_rng(seed + 7919)
    job_index = {job_id: j for j, job_id in enumerate(trace.jobs.job_id)}
    power = CampusPower(engine, pool, book, advisor) if isinstance(advisor, PowerPolicy) else None
    source: AdviceSource
    if isinstance(advisor, AdviceSource):
        source = advisor
    else:
        split = MachineSplit(rules.control_percent, names) if rules.control_percent else None
        source = AskedPolicy(power or advisor, pool.index, split=split)
    negotiator = Negotiator(engine, pool, book, source, rng, job_index, negotiation_interval)
    book.unadvised.bound_s = rules.wait_bound_s
    if rules.control_percent:  # the control group: matched as without advice from submission
        pct = rules.control_percent
        book.unadvised.control = {j for j, i in enumerate(book.ids) if arm_of(i, pct) == CONTROL}
    book.on_queued = listener.machine_freed = negotiator.request  # direct: ~0.5 M calls a month

    owners, jobs, down = trace.owners, trace.jobs, trace.unavailability
    logins = pool.plan_sessions(owners)
    engine.feed(zip(logins, range(len(logins)), strict=True), pool.owner_login)
    engine.feed(_pairs(owners.logout, owners.machine), pool.owner_logout)
    engine.feed(_pairs(jobs.submit, np.arange(len(jobs))), book.submit)
    removable = np.flatnonzero(np.isfinite(jobs.remove))
    engine.feed(_pairs(jobs.remove[removable], removable), book.remove)
    engine.feed(_pairs(down.start, down.machine), pool.machine_down)
    engine.feed(_pairs(down.end, down.machine), pool.machine_up)
    if rules.reboot_hour is not None:
        engine.at(next_reboot(trace.start, rules.reboot_hour), pool.reboot_all)
    return World(engine, pool, book, months, negotiator, power)


def replay(
    trace: Trace,
    policy: Policy,
    seed: int = 0,
    rules: PoolRules | None = None,
    negotiation_interval: float = 60.0,
    on_progress: Callable[[float], None] | None = None,
) -> ReplayResult:
    """Run the whole trace; ``on_progress(fraction)`` is called as simulated days pass."""
    rules = rules or PoolRules()
    emit_job = _emitter(policy, ALL_EVENT_KINDS - MACHINE_EVENTS)
    percent = rules.control_percent
    if percent and emit_job is not None:  # the policy learns from treated jobs only
        learn = emit_job

        def emit_job(event: Event) -> None:
            if not of_control_job(event, percent):
                learn(event)

    world = build_world(
        trace,
        policy,
        seed,
        rules,
        negotiation_interval,
        policy.observe if policy.WANTS & MACHINE_EVENTS else None,
        emit_job,
        policy.WANTS,
        policy.WANTS_POWER,
    )
    engine, pool, book, months, negotiator = (
        world.engine,
        world.pool,
        world.book,
        world.months,
        world.negotiator,
    )
    _schedule_retraining(engine, policy, trace)

    advance = None
    if on_progress is not None:
        span = max(trace.end - trace.start, 1.0)
        next_tick = [trace.start]
        report = on_progress

        def advance(t: float) -> None:
            if t >= next_tick[0]:
                next_tick[0] = t + DAY
                report(min(1.0, (t - trace.start) / span))

    began, cpu = time.perf_counter(), time.process_time()
    with fewer_collections():
        events = engine.run(trace.end, advance)
    world.close(engine.now())
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    if on_progress is not None:
        on_progress(1.0)
    return ReplayResult(policy.label, trace, pool, book, months, negotiator, events, wall, cpu)
