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


def test_gradients_are_those_of_the_clipped_loss_by_finite_differences() -> None:
    """The hand-written backprop is d/dθ of -(eq. 7) + c_v (V - R)^2 - c_e H, averaged over the
    batch: ratios on both sides of the clip (eq. 8) and advantages of both signs."""
    from plugins.power.ppo import gradients

    rng = np.random.default_rng(5)
    n, cfg = 64, PpoConfig(value_coef=0.5, entropy_coef=0.05, clip=0.2)
    params = {k: v.astype(np.float64) for k, v in init_params(5, 7, 4, rng).items()}
    params["wp"] = rng.normal(0, 0.5, params["wp"].shape)  # a policy far from uniform
    x = rng.normal(size=(n, 5))
    act = rng.integers(0, 4, n)
    now = forward(params, x)[0][np.arange(n), act]
    old = now + rng.normal(0, 0.3, n)  # ratios well inside and well outside [0.8, 1.2]
    adv, ret = rng.normal(size=n), rng.normal(size=n)

    def loss(p: dict[str, np.ndarray]) -> float:
        logp, value, _ = forward(p, x)
        ratio = np.exp(logp[np.arange(n), act] - old)
        clipped = np.clip(ratio, 1 - cfg.clip, 1 + cfg.clip)
        surrogate = np.minimum(ratio * adv, clipped * adv).mean()
        entropy = -(np.exp(logp) * logp).sum(axis=1).mean()
        return float(
            -surrogate + cfg.value_coef * ((value - ret) ** 2).mean() - cfg.entropy_coef * entropy
        )

    grads, _ = gradients(params, x, act, old, adv, ret, cfg)
    for key, value in params.items():
        numeric = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            saved = value[i]
            value[i] = saved + 1e-6
            up = loss(params)
            value[i] = saved - 1e-6
            numeric[i] = (up - loss(params)) / 2e-6
            value[i] = saved
        assert np.allclose(grads[key], numeric, atol=1e-6), key
