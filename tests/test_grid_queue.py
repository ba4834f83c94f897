"""Paper 002's grid model: Table I workloads, greedy allocation, the last-500 exclusion, advice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
)
from plugins.contract.policy import PolicyContext, PoolView
from plugins.contract.registry import policy_class
from plugins.utility.ordering import EdfPolicy, FifoPolicy
from simulator.grid_queue.lcg import lcg_workload
from simulator.grid_queue.run import GridSimulation, processors
from simulator.grid_queue.stats import fairness_over_time, waiting_stats
from simulator.grid_queue.synthetic import mmn_workload
from simulator.grid_queue.trial import Trial, run_trial
from simulator.grid_queue.workload import GridWorkload


def _fifo(workload: GridWorkload) -> FifoPolicy:
    return FifoPolicy(PolicyContext(processors(workload.processors)), {"shares": workload.shares})


def test_synthetic_workload_matches_table_one() -> None:
    w = mmn_workload(0.2, seed=0)
    assert len(w) == 6000 and w.processors == 50
    assert w.interactive.mean() == pytest.approx(0.2, abs=0.02)
    assert w.runtime.mean() / 60 == pytest.approx(67, rel=0.05)  # Table I: 67 minutes
    assert w.submit[-1] / 3600 == pytest.approx(136, rel=0.05)  # Table I: 136 hours
    groups = np.array(w.group)
    assert np.mean(groups == "vo0") == pytest.approx(0.7, abs=0.02)
    assert mmn_workload(0.2, seed=0, feasible=False).shares["vo2"] == 0.2


def test_the_last_500_jobs_are_not_counted() -> None:
    # one processor, 510 ten-second jobs at t=0: waits 0, 10, ..., 5090; only the first 10 count
    w = GridWorkload("burst", 1, np.zeros(510), np.full(510, 10.0), ["vo0"] * 510, {"vo0": 1.0})
    run = GridSimulation(w, _fifo(w)).run()
    assert run.wait.max() == 5090.0
    stats = waiting_stats(run)["interactive"]
    assert stats["jobs"] == 10
    assert stats["max"] == 90.0 and stats["mean"] == 45.0 and stats["median"] == 45.0


def test_greedy_allocation_never_idles_a_processor_while_jobs_wait() -> None:
    w = mmn_workload(0.5, jobs=400, processors=5, seed=2)
    run = GridSimulation(w, EdfPolicy(PolicyContext(processors(5)), {})).run()
    end = run.start + w.runtime
    for t in run.start[run.wait > 0]:  # a job that waited started the moment one freed
        assert np.any(np.isclose(end, t)) or np.sum((run.start <= t) & (end > t)) == 5


def test_fifo_starts_jobs_in_arrival_order() -> None:
    w = mmn_workload(0.2, jobs=300, processors=3, seed=4)
    run = GridSimulation(w, _fifo(w)).run()
    assert np.all(np.diff(run.start) >= 0)


def test_reordering_cuts_the_mean_wait_but_not_the_work_weighted_wait() -> None:
    # Kleinrock's conservation law: sum(p W) / sum(p) barely moves between greedy orders, which
    # is why no order can cut the batch jobs' mean wait 8-fold while they carry ~99% of the work
    w = mmn_workload(0.2, jobs=1500, processors=10, seed=3)
    stats = {}
    for name in ("fifo", "edf", "sjf"):
        policy = policy_class(name)(PolicyContext(processors(10)), {"shares": w.shares})
        stats[name] = waiting_stats(GridSimulation(w, policy).run())["batch"]
    assert stats["sjf"]["mean"] < 0.7 * stats["fifo"]["mean"]
    for name in ("edf", "sjf"):
        assert stats[name]["work_mean"] == pytest.approx(stats["fifo"]["work_mean"], rel=0.1)


def test_advice_ranks_jobs_and_pushes_groups_towards_their_shares() -> None:
    policy = EdfPolicy(PolicyContext(processors(2)), {"shares": "a=0.5,b=0.5"})
    policy.observe(JobQueued(0.0, "long", "alice", group="a", expected_runtime_s=7200.0))
    policy.observe(JobQueued(10.0, "short", "bob", group="b", expected_runtime_s=60.0))
    policy.observe(JobQueued(20.0, "mid", "alice", group="a", expected_runtime_s=600.0))
    policy.observe(AttemptStarted(30.0, "long", "cpu000"))
    advice = policy.advise(PoolView((), ()), 3600.0)
    assert advice.jobs["short"].prio > advice.jobs["mid"].prio  # earlier deadline first
    # interactive, 59 minutes late: e^(-0.5 * 59) (eq. 2)
    assert advice.jobs["short"].utility == pytest.approx(np.exp(-0.5 * (3590 - 120) / 60))
    assert advice.groups["a"].received == 1.0 and advice.groups["b"].received == 0.0
    assert advice.groups["b"].priority_factor < 1.0 < advice.groups["a"].priority_factor


def test_fairness_over_time_is_perfect_when_service_matches_shares() -> None:
    w = GridWorkload(
        "pair", 2, np.zeros(2), np.array([100.0, 100.0]), ["a", "b"], {"a": 0.5, "b": 0.5}
    )
    run = GridSimulation(w, _fifo(w)).run()
    np.testing.assert_allclose(fairness_over_time(run, np.array([50.0, 100.0])), [1.0, 1.0])


@pytest.mark.slow
def test_sarsa_cuts_interactive_waiting_against_fifo_on_a_small_workload() -> None:
    build = {"interactive_fraction": 0.2, "jobs": 1500, "processors": 20}
    fifo = run_trial(Trial(mmn_workload, {**build, "seed": 7}, "fifo"))
    sarsa = run_trial(
        Trial(mmn_workload, {**build, "seed": 7}, "utility-sarsa", train_args={**build, "seed": 8})
    )
    assert sarsa.stats["interactive"]["mean"] * 4 < fifo.stats["interactive"]["mean"]
    assert sarsa.fair_end > fifo.fair_end - 0.03


@pytest.mark.realdata
def test_lcg_site_loads_with_vo_from_the_swf_group(shared_data: Path) -> None:
    path = shared_data / "b_workloads" / "LCG-2005-1" / "LCG-2005-1.swf.gz"
    w = lcg_workload(path, jobs=1000)
    assert len(w) == 1000 and w.processors == 100
    assert set(w.group) <= set(w.shares) and all(g.startswith("g") for g in w.group)
    assert sum(w.shares.values()) == pytest.approx(1.0)
    assert w.submit[0] == 0.0 and np.all(np.diff(w.submit) >= 0)


def test_only_the_head_gets_a_prio_and_jobs_leaving_it_are_reset() -> None:
    policy = EdfPolicy(PolicyContext(processors(1)), {"publish_top": "2"})
    for k in range(4):
        policy.observe(JobQueued(float(k), f"j{k}", "alice", expected_runtime_s=3600.0))
    first = policy.advise(PoolView((), ()), 10.0)
    assert {j: a.prio for j, a in first.jobs.items()} == {"j0": 2.0, "j1": 1.0}
    policy.observe(JobQueued(11.0, "short", "bob", expected_runtime_s=60.0))
    second = policy.advise(PoolView((), ()), 12.0)
    assert {j: a.prio for j, a in second.jobs.items()} == {"short": 2.0, "j0": 1.0, "j1": 0.0}
    assert second.jobs["j1"].utility is None


def test_the_events_a_policy_wants_keep_its_queue_model_true() -> None:
    policy = EdfPolicy(PolicyContext(processors(2)), {"shares": "a=1"})
    events: list[Event] = [
        JobQueued(0.0, "j", "u", group="a", expected_runtime_s=60.0),
        AttemptStarted(1.0, "j", "cpu000"),
        AttemptEnded(61.0, "j", "cpu000", AttemptOutcome.COMPLETED, 1.0),
    ]
    for event in events:
        if type(event) in policy.WANTS:  # what a driver honouring WANTS delivers
            policy.observe(event)
    assert policy.model.state(100.0)[1] == 2  # both processors idle again
    assert policy.group_advice(100.0)["a"].received == 1.0


@pytest.mark.parametrize("name", ["fifo", "edf", "sjf", "utility-sarsa"])
def test_a_job_removed_while_waiting_leaves_the_order(name: str) -> None:
    """Idle jobs their users removed (and, live, DAGMan itself: event_log.py) never start: kept,
    they headed a FIFO order for ever, and past ``publish_top`` of them no real job got a
    JobPrio."""
    policy = policy_class(name)(PolicyContext(processors(1)), {"publish_top": "2"})
    for k in range(4):
        queued = JobQueued(float(k), f"j{k}", "alice", expected_runtime_s=3600.0)
        policy.observe(queued)
    for k in range(2):
        removed = JobRemoved(5.0, f"j{k}")
        assert type(removed) in policy.WANTS
        policy.observe(removed)
    assert set(policy.advise(PoolView((), ()), 10.0).jobs) == {"j2", "j3"}
