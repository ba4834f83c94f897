"""Energy accounting of the node power state machine (paper 001, sections 3.1 and 3.3)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dedicatedkit import workload

from plugins.contract.advice import PowerAdvice
from plugins.contract.policy import PolicyContext
from plugins.power.base import node_advice
from plugins.power.timeout import TimeoutPolicy
from plugins.power.view import IDLE, OFF, SWITCHING_OFF, PowerDecision
from simulator.dedicated.cluster import Cluster
from simulator.dedicated.episode import DayEpisode
from simulator.dedicated.power import CoreUse, NodeState, PowerProfile
from simulator.engine import Engine

P = PowerProfile()


def reserve(episode: DayEpisode, nodes: int) -> float:
    """One step with ``nodes`` held off (the rest as they are); the step's reward."""
    return episode.step(node_advice(episode.view(), PowerDecision(reserve=nodes)))


def test_idle_then_switch_off_costs_idle_transition_and_off_power() -> None:
    engine = Engine(0.0)
    cluster = Cluster(workload(1, 2, [(0, 1, 60, 60)]), P, engine, on=True)
    engine.run(100.0)
    assert cluster.switch_off(0)
    engine.run(100.0 + P.switch_off_s + 20.0)
    cluster.meter.advance(engine.now())
    j = cluster.meter.joules
    assert j[CoreUse.IDLE] == pytest.approx(2 * 95.0 * 100.0)
    assert j[CoreUse.SWITCHING_OFF] == pytest.approx(2 * 101.0 * 180.0)
    assert j[CoreUse.OFF] == pytest.approx(2 * 9.75 * 20.0)
    assert cluster.state[0] == NodeState.OFF
    assert cluster.meter.waste_j() == pytest.approx(2 * (95.0 * 100.0 + 101.0 * 180.0))


def test_a_busy_node_cannot_be_switched_off_and_its_idle_core_is_waste() -> None:
    jobs = workload(1, 2, [(0, 1, 600, 300)])
    episode = DayEpisode(jobs)
    episode.cluster.switch_on(0)
    episode.engine.run(P.switch_on_s + 1.0)  # boot done at 60 s, the job starts then
    assert episode.cluster.state[0] == NodeState.COMPUTING
    assert not episode.cluster.switch_off(0)
    episode.engine.run(P.switch_on_s + 301.0)
    meter = episode.cluster.meter
    meter.advance(episode.engine.now())
    assert meter.joules[CoreUse.COMPUTING] == pytest.approx(190.0 * 300.0)
    assert meter.joules[CoreUse.SWITCHING_ON] == pytest.approx(2 * 125.0 * 60.0)
    # one core idles beside the job for 300 s, then both for the last second
    assert meter.joules[CoreUse.IDLE] == pytest.approx(95.0 * (300.0 + 2 * 1.0))


def test_a_day_conserves_core_time_and_waste_is_idle_plus_switching() -> None:
    jobs = workload(3, 2, [(100, 3, 900, 400), (200, 2, 900, 900), (5000, 6, 900, 100)])
    episode = DayEpisode(jobs)
    metrics = episode.run(TimeoutPolicy(PolicyContext({}), {"t": 1.0}))
    meter = episode.cluster.meter
    core_seconds = meter.joules / P.watts()
    assert core_seconds.sum() == pytest.approx(6 * 86400.0)
    assert core_seconds[CoreUse.COMPUTING] == pytest.approx(3 * 400 + 2 * 900 + 6 * 100)
    waste = sum(
        meter.joules[u] for u in (CoreUse.IDLE, CoreUse.SWITCHING_ON, CoreUse.SWITCHING_OFF)
    )
    assert metrics.waste_kj == pytest.approx(waste / 1e3)
    # every node boots once per job burst and goes off again: switching energy is whole cycles
    switch_offs = episode.cluster.switch_offs
    assert core_seconds[CoreUse.SWITCHING_OFF] == pytest.approx(2 * switch_offs * P.switch_off_s)
    assert metrics.unstarted == 0


def test_reserved_nodes_go_off_and_are_not_used_until_released() -> None:
    jobs = workload(2, 1, [(0, 1, 600, 60)])
    episode = DayEpisode(jobs)
    reserve(episode, 2)
    assert episode.cluster.record.start[0] != episode.cluster.record.start[0]  # still NaN
    assert episode.cluster.reserved.all()
    reserve(episode, 1)
    reserve(episode, 1)
    assert episode.cluster.record.start[0] == pytest.approx(60.0 + P.switch_on_s)


@pytest.mark.parametrize("tau", [0.5, 1.0])
def test_reward_is_minus_waste_and_late_cores_per_core_eq_3_to_5(tau: float) -> None:
    """Eq. 3: r = -(E_waste + QoS), in idle-core-minutes per core of the cluster; eq. 5 counts a
    queued job's cores once wait >= wall * tau; eq. 4 counts boot energy, not reserved-off nodes."""
    episode = DayEpisode(workload(2, 1, [(0, 1, 120, 60)]), tau=tau)  # 2 cores in all
    held = [reserve(episode, 2) for _ in range(2)]  # both nodes off, held
    late = [wait >= 120 * tau for wait in (60.0, 120.0)]
    assert held == pytest.approx([-float(x) / 2 for x in late])
    boot = episode.step(
        node_advice(episode.view(), PowerDecision(reserve=1))
    )  # one node boots during 120-180 s
    assert boot == pytest.approx(-(P.switching_on_w / P.idle_w + 1) / 2)  # still queued at 180
    assert reserve(episode, 1) == 0.0  # computing: no waste, nobody waits
    assert reserve(episode, 1) == pytest.approx(-0.5)  # one idle core


def test_a_reservation_grows_by_the_cheapest_nodes_and_shrinks_from_the_top() -> None:
    view = DayEpisode(workload(4, 1, [(0, 1, 600, 60)])).view()
    view = dataclasses.replace(
        view, node_state=np.array([IDLE, OFF, SWITCHING_OFF, IDLE], dtype=np.int8)
    )
    advice = node_advice(view, PowerDecision(reserve=3, switch_off=(3,)))
    # node 3 goes off now (first, as the decision said), then the off and switching-off nodes
    assert list(advice.machines) == ["node3", "node1", "node2"]
    assert {a.power for a in advice.machines.values()} == {PowerAdvice.RESERVE_OFF}
    assert all(a.hold for a in advice.machines.values())
    held = dataclasses.replace(view, reserved=np.array([True, True, True, False]))
    assert list(node_advice(held, PowerDecision(reserve=1)).machines) == ["node0"]
