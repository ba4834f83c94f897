"""History windows and weights of the bandit estimates (paper 000 eq. 3, 7, 8), by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from plugins.bandits.agent import BanditAgent
from plugins.bandits.history import Estimate, gaussian_weight, parse_history
from plugins.bandits.options import EpsilonBoost

REWARDS = [1.0, -1.0, 0.5, 1.0, -0.25]


def estimate(text: str, rewards: list[float]) -> float:
    est = Estimate(parse_history(text))
    for r in rewards:
        est.add(r)
    return est.value


def test_mean_of_all_rewards_is_eq_3() -> None:
    assert estimate("all", REWARDS) == pytest.approx(1.25 / 5)


def test_last_n_keeps_only_the_newest_rewards() -> None:
    assert estimate("last:3", REWARDS) == pytest.approx((0.5 + 1.0 - 0.25) / 3)
    assert estimate("last:10", REWARDS) == pytest.approx(1.25 / 5)


def test_gaussian_weights_are_eq_8() -> None:
    assert gaussian_weight(4, 4) == 1.0
    assert gaussian_weight(1, 4) == pytest.approx(math.exp(-6.0))
    assert gaussian_weight(2, 4) == pytest.approx(math.exp(-4.0))


def test_gaussian_window_is_eq_7_by_hand() -> None:
    # n = 3: the last three rewards 0.5, 1.0, -0.25 weigh e^(-16/3), e^(-8/3), 1.
    w = [math.exp(-16 / 3), math.exp(-8 / 3), 1.0]
    expected = (0.5 * w[0] + 1.0 * w[1] - 0.25 * w[2]) / sum(w)
    assert estimate("gaussian:3", REWARDS) == pytest.approx(expected, rel=1e-12)
    # before the window is full only the rewards seen so far count
    w2 = [math.exp(-8 / 3), 1.0]
    assert estimate("gaussian:3", [1.0, -1.0]) == pytest.approx((w2[0] - w2[1]) / sum(w2))


def test_gaussian_stays_exact_over_many_rewards() -> None:
    rng = np.random.default_rng(3)
    rewards = rng.uniform(-1, 1, 5000).tolist()
    n = 50
    w = [gaussian_weight(i, n) for i in range(1, n + 1)]
    expected = sum(r * wi for r, wi in zip(rewards[-n:], w, strict=True)) / sum(w)
    assert estimate(f"gaussian:{n}", rewards) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("bad", ["last", "last:0", "gaussian:x", "recent:5", "all:3"])
def test_bad_history_names_the_forms(bad: str) -> None:
    with pytest.raises(ValueError, match="last:N"):
        parse_history(bad)


def test_epsilon_variants_of_sec_4_4_2() -> None:
    agent = BanditAgent(
        parse_history("all"),
        0.1,
        initial=EpsilonBoost(0.9, 2),
        diverge=EpsilonBoost(0.5, 2, ratio=0.5),
    )
    assert agent.epsilon_for("s") == 0.9  # no reward yet: initially high
    agent.reward("s", "a", 1.0)
    agent.reward("s", "a", 0.8)
    assert agent.epsilon_for("s") == 0.1  # young phase over, recent mean 0.9 >= 0.5 x best
    agent.reward("s", "a", -1.0)
    assert agent.epsilon_for("s") == 0.5  # recent mean (0.8 - 1) / 2 < 0.5 x 1.0


def test_greedy_prefers_untried_over_bad_when_untried_count_as_zero() -> None:
    rng = np.random.default_rng(0)
    agent = BanditAgent(parse_history("all"), 0.0, untried_zero=True)
    agent.reward("s", "bad", -0.5)
    assert agent.greedy("s", ["bad", "new"], rng) == "new"
    strict = BanditAgent(parse_history("all"), 0.0, untried_zero=False)
    strict.reward("s", "bad", -0.5)
    assert strict.greedy("s", ["bad", "new"], rng) == "bad"
