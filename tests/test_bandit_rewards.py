"""Rewards of eq. 4 (paper 000) on constructed pools, and the queue-in-hindsight rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tracekit import MONDAY, OFFICE, H, trace

from plugins.bandits.hindsight import FreeMachines
from plugins.bandits.placement import QUEUE, ClusterBandit
from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.clock import hour_of_day
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, Event, JobQueued
from plugins.contract.policy import MachineView, PolicyContext, PoolView
from simulator.campus.replay import machine_infos, replay
from simulator.trace_model import Cluster, Inventory, MachineSpec

SIGMA = 0.5


class Watched(ClusterBandit):
    """The real cluster bandit, keeping the attempts it saw so a test knows where jobs went."""

    def __init__(self, context: PolicyContext, options: Any = None) -> None:
        super().__init__(context, options)
        self.ended: list[AttemptEnded] = []

    def observe(self, event: Event) -> None:
        super().observe(event)
        if isinstance(event, AttemptEnded):
            self.ended.append(event)


def two_rooms() -> Inventory:
    """A 57 W room (E_a = 0) and a 114 W room (E_a = 1)."""
    return Inventory(
        {"cheap": Cluster("cheap", OFFICE), "hungry": Cluster("hungry", OFFICE)},
        [
            MachineSpec("c0", "cheap", "normal", 2, 57.0, 40.0, 2.0),
            MachineSpec("h0", "hungry", "high_end", 4, 114.0, 67.0, 3.0),
        ],
    )


def run(sessions: list[tuple[float, int, float]], jobs: list[tuple[float, float, float]]):
    tr = trace(two_rooms(), sessions, jobs)
    policy = Watched(PolicyContext(machine_infos(tr), seed=4), {"sigma": SIGMA, "epsilon": 0.0})
    policy.agent.reward((10, 0), QUEUE, -1.0)  # so the 10:00 job is placed, in either room
    replay(tr, policy, seed=4)
    return policy


def placed_value(policy: Watched, ended: AttemptEnded) -> float:
    assert hour_of_day(ended.started) == 10
    state = (10, 0)
    cluster = policy.context.machines[ended.machine].cluster
    value = policy.agent.value(state, cluster)
    assert value is not None
    return value


def test_completed_job_earns_one_minus_sigma_energy() -> None:
    policy = run([], [(10 * H, 1800.0, 20 * H)])
    (ended,) = policy.ended
    assert ended.outcome is AttemptOutcome.COMPLETED
    energy = 0.0 if ended.machine == "c0" else 1.0
    assert placed_value(policy, ended) == pytest.approx(1.0 - SIGMA * energy)


def test_evicted_job_earns_minus_one_plus_sigma_headroom() -> None:
    # Both owners arrive at 10:30 and stay; the user removes the job, still queued, at noon.
    policy = run([(10.5 * H, 0, 23 * H), (10.5 * H, 1, 23 * H)], [(10 * H, 1800.0 * 3, 12 * H)])
    (ended,) = policy.ended
    assert ended.outcome is AttemptOutcome.EVICTED_OWNER
    energy = 0.0 if ended.machine == "c0" else 1.0
    assert placed_value(policy, ended) == pytest.approx(-1.0 + SIGMA * (1.0 - energy))


def queue_then_run(other_machine_taken_at: float) -> float:
    """A policy that prefers queueing; a job queued at 10:00 runs 11:00-12:00 on c0.

    Returns the learned value of queueing in state (10 h, class 0)."""
    inv = two_rooms()
    context = PolicyContext(machine_infos(trace(inv)), seed=1)
    policy = ClusterBandit(context, {"epsilon": 0.0})
    state = (10, 0)
    policy.agent.reward(state, QUEUE, 1.0)  # queueing looks best, so the bandit queues
    t0 = MONDAY + 10 * H
    policy.observe(JobQueued(t0, "1.0", "alice"))
    view = PoolView(
        [MachineView("c0", "idle", t0), MachineView("h0", "idle", t0)],
        (1,) + (0,) * (PRIOR_HOURS_CLASSES - 1),
    )
    advice = policy.advise(view, t0)
    assert all(a.rank_for(0) < 0 for a in advice.machines.values())  # class 0 stays queued
    start = MONDAY + 11 * H
    events: list[Event] = [
        AttemptStarted(other_machine_taken_at, "2.0", "h0"),
        AttemptStarted(start, "1.0", "c0"),
        AttemptEnded(start + H, "1.0", "c0", AttemptOutcome.COMPLETED, start, 57.0),
    ]
    for event in sorted(events, key=lambda e: e.time):
        policy.observe(event)
    value = policy.agent.value(state, QUEUE)
    assert value is not None
    return value


def test_queueing_is_punished_when_a_free_machine_stayed_free_long_enough() -> None:
    # h0 stays free from 10:00 until 11:30, longer than the job's 1 h: queueing was wrong (-1).
    assert queue_then_run(MONDAY + 11.5 * H) == pytest.approx((1.0 - 1.0) / 2)


def test_queueing_is_rewarded_when_no_free_machine_would_have_lasted() -> None:
    # c0 is taken at 11:00 (by this very job), h0 at 10:30: nothing stayed free 1 h (+1).
    assert queue_then_run(MONDAY + 10.5 * H) == pytest.approx(1.0)


def test_free_period_history_answers_for_any_past_decision() -> None:
    free = FreeMachines(lambda m: 0, 1)
    free.free("a", 0.0)
    free.free("b", 5.0)
    free.take("a", 10.0)
    free.free("a", 12.0)
    free.take("b", 20.0)
    assert free.stayed_free(0.0, 9.0)  # a, free 0..10
    assert not free.stayed_free(0.0, 11.0)  # a was taken at 10, b only free since 5
    assert free.stayed_free(6.0, 19.0)  # b, free 5..20
    assert not free.stayed_free(6.0, 21.0)
    assert free.stayed_free(13.0, 100.0)  # a, free again since 12 and still free
    assert len(free.members[0]) == 1
    positions = free.positions(True, False)
    assert isinstance(positions, np.ndarray) and positions.tolist() == [0]


def test_free_period_history_survives_a_clock_that_goes_back() -> None:
    free = FreeMachines(lambda m: 0, 1)
    free.free("a", 10.0)
    free.free("c", 10.5)
    free.free("b", 4.0)  # the daemon's clock stepped back
    free.take("a", 11.0)
    assert free.stayed_free(4.0, 12.0)  # b, free since 4, is the longest free now
    free.take("b", 13.0)
    assert not free.stayed_free(4.0, 14.0)


@pytest.mark.parametrize("rule", [True, False])
def test_local_knowledge_keeps_jobs_that_would_cross_the_reboot_queued(rule: bool) -> None:
    """Sec. 4.4.3: at 23:00 the 03:00 reboot is 4 h away; a class-5 job (an earlier attempt of
    5 h) is only ever queued, a class-2 job may still start."""
    context = PolicyContext(machine_infos(trace(two_rooms(), [], [])), seed=1)
    policy = ClusterBandit(context, {"epsilon": "0", "reboot_rule": str(rule)})
    for k in (2, 5):
        policy.agent.reward((23, k), "cheap", 1.0)
        policy.agent.reward((23, k), QUEUE, -1.0)
    now = MONDAY + 23 * H
    idle = tuple(1 if k in (2, 5) else 0 for k in range(PRIOR_HOURS_CLASSES))
    view = PoolView([MachineView("c0", "idle", now)], idle, new_jobs=["j"])
    advice = policy.advise(view, now)
    cheap = advice.shared[advice.follows["c0"]]  # c0 follows its cluster's row
    assert cheap.rank_for(2) > 0
    assert (cheap.rank_for(5) < 0) is rule
