"""PPO on numpy (paper 001, eq. 6-8) learns a constructed task whose best action is known."""

from __future__ import annotations

import numpy as np
import pytest

from plugins.power.ppo import Adam, PpoConfig, forward, gae, init_params, ppo_update


def test_gae_is_the_discounted_sum_of_td_errors() -> None:
    rng = np.random.default_rng(0)
    r, v = rng.normal(size=6), rng.normal(size=6)
    gamma, lam, last = 0.99, 0.95, 0.7
    adv, ret = gae(r, v, last, gamma, lam)
    nxt = np.append(v[1:], last)
    delta = r + gamma * nxt - v
    for t in range(6):
        expected = sum((gamma * lam) ** k * delta[t + k] for k in range(6 - t))
        assert adv[t] == pytest.approx(expected)
    assert ret == pytest.approx(adv + v)


def test_ppo_learns_the_best_action_of_a_contextual_bandit() -> None:
    """Reward 1 for action 2 when x0 > 0 and for action 0 otherwise; action 1 is never right."""
    rng = np.random.default_rng(1)
    cfg = PpoConfig(minibatch=128, lr=3e-3)
    params = init_params(8, 32, 3, rng)
    opt = Adam(params, cfg.lr)

    def best(x: np.ndarray) -> np.ndarray:
        return np.where(x[:, 0] > 0, 2, 0)

    for _ in range(60):
        x = rng.normal(size=(256, 8)).astype(np.float32)
        logp, value, _ = forward(params, x)
        cdf = np.cumsum(np.exp(logp), axis=1)
        act = (cdf < rng.random((256, 1)) * cdf[:, -1:]).sum(axis=1)
        reward = (act == best(x)).astype(float)
        adv = reward - value  # one-step episodes: eq. 6 reduces to r - V(s)
        batch = {"obs": x, "act": act, "logp": logp[np.arange(256), act], "adv": adv}
        ppo_update(params, opt, batch | {"ret": reward}, cfg, rng)
    x = rng.normal(size=(1000, 8)).astype(np.float32)
    logp, value, _ = forward(params, x)
    assert np.mean(np.argmax(logp, axis=1) == best(x)) > 0.95
    assert abs(float(value.mean()) - 1.0) < 0.2  # the critic learned the return of the policy


def test_imitation_learns_a_rare_teacher_action() -> None:
    """The teacher releases (action 0) in 3% of states, exactly when x0 > 1.9: cloning finds it."""
    from plugins.power.ppo import imitate

    rng = np.random.default_rng(2)
    x = rng.normal(size=(4000, 6)).astype(np.float32)
    act = np.where(x[:, 0] > 1.9, 0, 2)
    params = init_params(6, 16, 3, rng)
    balanced = imitate(params, x, act, 30, PpoConfig(minibatch=200, lr=3e-3), rng)
    assert balanced > 0.9
    test = rng.normal(size=(4000, 6)).astype(np.float32)
    chosen = np.argmax(forward(params, test)[0], axis=1)
    rare = test[:, 0] > 2.1
    assert np.mean(chosen[rare] == 0) > 0.8
    assert np.mean(chosen[test[:, 0] < 1.5] == 2) > 0.9
