"""Power policies: timeout semantics, the oracle alone reads runtimes, advice for the daemon."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dedicatedkit import random_workload, tiny_agent, workload

from plugins.contract.advice import MachineAdvice, PowerAdvice
from plugins.contract.policy import MachineInfo, MachineView, OptionError, PolicyContext, PoolView
from plugins.contract.registry import available
from plugins.power.base import PowerPolicy
from plugins.power.or_oracle import OrOraclePolicy
from plugins.power.timeout import TimeoutPolicy
from plugins.power.view import ClusterView
from simulator.dedicated.episode import STEP_S, DayEpisode
from simulator.dedicated.power import NodeState


def power_policies() -> dict[str, type[PowerPolicy]]:
    return {n: c for n, c in available().items() if issubclass(c, PowerPolicy)}


@pytest.mark.parametrize("t", [0.0, 1.0, 5.0, 2.5])
def test_timeout_switches_a_node_off_at_the_first_decision_after_t_idle_minutes(t: float) -> None:
    jobs = workload(2, 1, [(0, 1, 600, 130)])
    episode = DayEpisode(jobs)
    policy = TimeoutPolicy(PolicyContext({}), {"t": t})
    # boot 0..60 s, run 60..190 s, idle from 190 s
    idle_from = 60.0 + 130.0
    first_off = None
    while not episode.done and first_off is None:
        view = episode.view()
        advice = policy.advise(view, view.now)
        if advice.machines:
            first_off = view.now
            assert advice.machines == {"node0": MachineAdvice(power=PowerAdvice.MAY_SLEEP)}
        episode.step(advice)
    assert first_off is not None
    assert first_off >= idle_from + 60 * t
    assert first_off < idle_from + 60 * t + STEP_S
    assert episode.cluster.state[1] == NodeState.OFF  # never needed, never booted


def test_timeout_rejects_a_negative_t_naming_the_key() -> None:
    with pytest.raises(OptionError, match="t="):
        TimeoutPolicy(PolicyContext({}), {"t": "-1"})


def test_the_view_carries_no_runtimes() -> None:
    names = {f.name for f in dataclasses.fields(ClusterView)}
    assert not any("runtime" in n or "end" in n for n in names)


class CountingOracle:
    def __init__(self, episode: DayEpisode) -> None:
        from simulator.dedicated.episode import EpisodeOracle

        self.inner = EpisodeOracle(episode)
        self.calls = 0

    def running_end(self) -> np.ndarray:
        self.calls += 1
        return self.inner.running_end()

    def queued_runtime(self) -> np.ndarray:
        self.calls += 1
        return self.inner.queued_runtime()


def test_only_the_oracle_policy_reads_future_runtimes() -> None:
    found = power_policies()
    assert {"timeout", "or-oracle", "or-ppo"} <= set(found)
    jobs = random_workload(np.random.default_rng(3), 4, 2, 25)
    for name, cls in found.items():
        policy = cls(PolicyContext({}), {"agent": tiny_agent()} if name == "or-ppo" else {})
        assert ("oracle" in name) == cls.NEEDS_ORACLE
        episode = DayEpisode(jobs)
        oracle = CountingOracle(episode)
        if cls.NEEDS_ORACLE:
            policy.bind_oracle(oracle)
        else:
            with pytest.raises(RuntimeError):
                policy.bind_oracle(oracle)
        for _ in range(200):
            view = episode.view()
            episode.step(policy.advise(view, view.now))
        assert (oracle.calls > 0) == cls.NEEDS_ORACLE, name


def test_or_oracle_delays_a_short_job_to_reuse_a_busy_node_instead_of_booting() -> None:
    # the first job is held to its deadline (450 s), boots and runs 420..1020 s; the second
    # arrives at 300 s and may wait to 1200 s: OR* gives it the first job's node, T(0) a new boot
    jobs = workload(2, 1, [(0, 1, 900, 600), (300, 1, 1800, 60)])
    oracle_run = DayEpisode(jobs)
    oracle_policy = OrOraclePolicy(PolicyContext({}))
    oracle_metrics = oracle_run.run(oracle_policy)
    t0 = DayEpisode(jobs).run(TimeoutPolicy(PolicyContext({}), {"t": 0.0}))
    assert oracle_metrics.cycles_per_node < t0.cycles_per_node
    assert oracle_metrics.waste_kj < t0.waste_kj
    assert oracle_run.cluster.record.start[1] == pytest.approx(1020.0)


def test_power_policies_speak_the_normal_advice_protocol() -> None:
    machines = [MachineView("a", "idle", 0.0), MachineView("b", "sleep", 0.0)]
    timeout = TimeoutPolicy(PolicyContext({}), {"t": 1.0})
    quiet = timeout.advise(PoolView(machines, [0] * 24), 120.0)
    assert quiet.machines["a"].power == PowerAdvice.MAY_SLEEP
    assert quiet.machines["b"].power == PowerAdvice.ON
    assert quiet.machines["a"].expires == pytest.approx(120.0 + 300.0)
    busy = timeout.advise(PoolView(machines, [2] + [0] * 23), 120.0)
    assert busy.machines["a"].power == PowerAdvice.ON  # the waiting jobs will use it
    assert busy.machines["b"].power == PowerAdvice.WAKE
    ppo = power_policies()["or-ppo"](PolicyContext({}), {"agent": tiny_agent()})
    ppo.load_state({})
    reserved = ppo.advise(PoolView(machines, [0] * 24), 0.0)
    for m in reserved.machines.values():
        assert m.hold == (m.power == PowerAdvice.RESERVE_OFF)


def test_a_machine_that_would_not_sleep_is_neither_switched_off_nor_reserved() -> None:
    """Its startd ignores HIBERNATE (no wake-on-LAN, as most real ads say): "may-sleep" would
    change nothing and "reserve-off" would hold it idle and awake; it stays ready for jobs."""
    machines = [MachineView("a", "idle", 0.0, can_sleep=False), MachineView("b", "idle", 0.0)]
    timeout = TimeoutPolicy(PolicyContext({}), {"t": 1.0})
    quiet = timeout.advise(PoolView(machines, [0] * 24), 120.0)
    assert {n: a.power for n, a in quiet.machines.items()} == {
        "a": PowerAdvice.ON,
        "b": PowerAdvice.MAY_SLEEP,
    }
    ppo = power_policies()["or-ppo"](PolicyContext({}), {"agent": tiny_agent()})
    ppo.load_state({})
    for view in (machines, machines[:1]):
        reserved = ppo.advise(PoolView(view, [0] * 24), 0.0)
        assert reserved.machines["a"] == dataclasses.replace(
            reserved.machines["a"], power=PowerAdvice.ON, hold=False
        )


@pytest.mark.parametrize(("cores", "woken"), [(1, ["b", "c"]), (4, [])])
def test_a_free_partitionable_machine_takes_as_many_waiting_jobs_as_it_has_free_cores(
    cores: int, woken: list[str]
) -> None:
    """Three jobs wait, one machine is awake and free: a 4-core partitionable one takes them
    all, so no sleeping machine is woken for them; a single one takes one (docs/slots.md)."""
    info = {n: MachineInfo(n, "room", "normal", 57.0, 40.0, 2.0, cores) for n in "abcd"}
    timeout = TimeoutPolicy(PolicyContext(info), {"t": 60.0})
    awake = [MachineView("a", "idle", 0.0, None, 4)]
    asleep = [MachineView(n, "sleep", 0.0, None, 4) for n in "bcd"]
    advice = timeout.advise(PoolView(awake + asleep, [3] + [0] * 23), 120.0)
    assert [n for n, a in advice.machines.items() if a.power == PowerAdvice.WAKE] == woken


@pytest.mark.parametrize(
    ("cores", "by_cpus", "woken"),
    [(4, {2: 3}, ["b"]), (4, {4: 2, 1: 1}, ["b", "c"]), (1, {4: 2}, ["b"]), (4, {}, [])],
)
def test_a_waiting_job_wakes_machines_for_the_cores_it_requests(
    cores: int, by_cpus: dict[int, int], woken: list[str]
) -> None:
    """One 4-core machine is awake and free. Three 2-core jobs need 6 cores, so one more machine
    is woken; two 4-core jobs and a one-core one need 9, so two. On single-slot machines a
    4-core job takes a whole one, as a one-core job does. A source that does not say counts
    each of the three jobs as one core (docs/slots.md)."""
    info = {n: MachineInfo(n, "room", "normal", 57.0, 40.0, 2.0, cores) for n in "abcd"}
    timeout = TimeoutPolicy(PolicyContext(info), {"t": 60.0})
    awake = [MachineView("a", "idle", 0.0, None, cores)]
    asleep = [MachineView(n, "sleep", 0.0, None, cores) for n in "bcd"]
    view = PoolView(awake + asleep, [sum(by_cpus.values()) or 3] + [0] * 23, (), by_cpus)
    advice = timeout.advise(view, 120.0)
    assert [n for n, a in advice.machines.items() if a.power == PowerAdvice.WAKE] == woken


def test_the_machines_cores_are_counted_again_as_a_live_pool_grows() -> None:
    """A live pool is empty when the policy is built: until its 4-core machines join, a 2-core
    job counts as one; once they have, as two, and three of them wake one machine more."""
    info: dict[str, MachineInfo] = {}
    timeout = TimeoutPolicy(PolicyContext(info), {"t": 60.0})
    awake = [MachineView("a", "idle", 0.0, None, 4)]
    asleep = [MachineView(n, "sleep", 0.0, None, 4) for n in "bcd"]
    view = PoolView(awake + asleep, [3] + [0] * 23, (), {2: 3})

    def woken() -> list[str]:
        advice = timeout.advise(view, 120.0)
        return [n for n, a in advice.machines.items() if a.power == PowerAdvice.WAKE]

    assert woken() == ["b", "c"]  # unknown machines: one job each, taking one
    info.update({n: MachineInfo(n, "room", "normal", 57.0, 40.0, 2.0, 4) for n in "abcd"})
    timeout.machines_joined(list(info.values()))
    assert woken() == ["b"]
