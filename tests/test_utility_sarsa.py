"""SARSA with the MLP Q: the update's fixed point on two states, the EDF warm start, options."""

from __future__ import annotations

import numpy as np
import pytest

from plugins.contract.policy import OptionError, PolicyContext
from plugins.utility.sarsa import UtilitySarsaPolicy
from simulator.grid_queue.run import GridSimulation, processors
from simulator.grid_queue.synthetic import mmn_workload
from simulator.grid_queue.trial import Trial, simulate


def _policy(**options: object) -> UtilitySarsaPolicy:
    return UtilitySarsaPolicy(PolicyContext(processors(2), seed=3), options)


def test_sarsa_update_reaches_the_two_state_fixed_point() -> None:
    # s1 -(r=1)-> s2 -(r=0)-> s1 ...: Q1 = 1 + g Q2, Q2 = g Q1 -> Q1 = 1/(1-g^2), Q2 = g Q1
    policy = _policy(warm_decisions=0, gamma=0.2)
    s1 = np.array([0.0, 1.0, 0.2, 1.0, 1.0, 0.1])
    s2 = np.array([0.5, 0.0, 0.8, 0.3, 0.0, 0.6])
    for _ in range(500):
        policy.learn(s1, 1.0)
        policy.learn(s2, 0.0)
    q1, q2 = policy.q.predict(np.vstack([s1, s2]))
    assert q1 == pytest.approx(1 / (1 - 0.04), abs=0.01)
    assert q2 == pytest.approx(0.2 / (1 - 0.04), abs=0.01)


def test_batch_relearning_reaches_the_same_fixed_point() -> None:
    policy = _policy(warm_decisions=0, gamma=0.2, learning="batch", relearn_every=50, sweeps=10)
    s1, s2 = np.array([0.0, 1.0, 0.2, 1.0, 1.0, 0.1]), np.array([0.5, 0.0, 0.8, 0.3, 0.0, 0.6])
    for _ in range(150):
        policy.learn(s1, 1.0)
        policy.learn(s2, 0.0)
    q1, q2 = policy.q.predict(np.vstack([s1, s2]))
    assert q1 == pytest.approx(1 / (1 - 0.04), abs=0.08)
    assert q2 == pytest.approx(0.2 / (1 - 0.04), abs=0.08)


def test_warm_phase_decides_exactly_as_edf_then_prefers_short_jobs() -> None:
    workload = mmn_workload(0.4, jobs=700, processors=10, seed=5)
    edf = simulate(workload, Trial(mmn_workload, {}, "edf"))
    policy = UtilitySarsaPolicy(
        PolicyContext(processors(10), seed=1), {"shares": workload.shares, "warm_decisions": 700}
    )
    warm = GridSimulation(workload, policy).run()
    np.testing.assert_array_equal(warm.start, edf.start)
    assert policy.q.fitted and not policy.warm
    # after training on EDF's decisions, Q ranks a 2-minute job above a 3-hour one in one state
    row = np.zeros(policy.q.inputs)
    short, long = row.copy(), row.copy()
    short[4], short[-1] = 1.0, np.log1p(2.0) / 8
    long[-1] = np.log1p(180.0) / 8
    q_short, q_long = policy.q.predict(np.vstack([short, long]))
    assert q_short > q_long


def test_state_round_trips_and_skips_the_warm_phase() -> None:
    policy = _policy(warm_decisions=0)
    policy.learn(np.ones(6), 1.0)
    policy.learn(np.zeros(6), 0.0)
    again = _policy(warm_decisions=100)
    again.load_state(policy.state_dict())
    assert not again.warm
    x = np.vstack([np.ones(6), np.zeros(6)])
    np.testing.assert_allclose(again.q.predict(x), policy.q.predict(x))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("epsilon", "1.5", "within"), ("learning", "both", "incremental"), ("hidden", "0", ">= 1")],
)
def test_bad_options_name_the_key_and_the_fix(key: str, value: str, message: str) -> None:
    with pytest.raises(OptionError, match=f"{key}.*{message}"):
        _policy(**{key: value})
