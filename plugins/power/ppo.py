"""PPO (paper 001, section 4.3) on numpy: a small actor-critic MLP, GAE (eq. 6), the clipped
surrogate (eq. 7-8) and Adam; no deep-learning framework."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

Params = dict[str, np.ndarray]


@dataclass(frozen=True)
class PpoConfig:
    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    epochs: int = 4
    minibatch: int = 720
    lr: float = 1e-3
    value_coef: float = 0.5
    entropy_coef: float = 0.003
    reward_scale: float = 0.1
    """Rewards are scaled so that state values stay of order one for the shared trunk."""
    target_kl: float = 0.0
    """Stop an update's epochs once a minibatch's KL from the acting policy exceeds 1.5x this
    (0: never); keeps a warm-started actor from drifting far in one update."""


def init_params(
    inputs: int, hidden: int, actions: int, rng: np.random.Generator, favour: tuple[int, ...] = ()
) -> Params:
    """A tanh trunk with a softmax actor head and a linear critic head; ``favour``ed actions
    start with a higher logit so early exploration stays near known-sensible behaviour."""
    bias = np.zeros(actions)
    bias[list(favour)] = 4.0
    params = {
        "w1": rng.normal(0, 1 / np.sqrt(inputs), (inputs, hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0, 1 / np.sqrt(hidden), (hidden, hidden)),
        "b2": np.zeros(hidden),
        "wp": rng.normal(0, 0.01, (hidden, actions)),
        "bp": bias,
        "wv": rng.normal(0, 0.01, (hidden, 1)),
        "bv": np.zeros(1),
    }
    return {k: v.astype(np.float32) for k, v in params.items()}


def forward(p: Params, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """Log-probabilities over actions and state values (and the hidden layers for backprop)."""
    h1 = np.tanh(x @ p["w1"] + p["b1"])
    h2 = np.tanh(h1 @ p["w2"] + p["b2"])
    logits = h2 @ p["wp"] + p["bp"]
    logits = logits - logits.max(axis=-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    value = (h2 @ p["wv"] + p["bv"])[..., 0]
    return logp, value, (h1, h2)


def gae(
    rewards: np.ndarray, values: np.ndarray, last_value: float, gamma: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 6: A_t = sum_l (gamma lambda)^l delta_{t+l}, delta_t = r_t + gamma V(s_t+1) - V(s_t)."""
    nxt = np.append(values[1:], last_value)
    delta = rewards + gamma * nxt - values
    adv = np.zeros_like(rewards)
    acc = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = delta[t] + gamma * lam * acc
        adv[t] = acc
    return adv, adv + values


def gradients(
    p: Params, x: np.ndarray, act: np.ndarray, old_logp: np.ndarray, adv: np.ndarray,
    ret: np.ndarray, cfg: PpoConfig,
) -> tuple[Params, dict[str, float]]:  # fmt: skip
    """Gradient of -(eq. 7) + value loss - entropy bonus, by hand."""
    n = len(x)
    logp, value, (h1, h2) = forward(p, x)
    prob = np.exp(logp)
    taken = logp[np.arange(n), act]
    ratio = np.exp(taken - old_logp)
    # eq. 7: min(r A, clip(r, 1-eps, 1+eps) A); the gradient flows only where r A is the min
    unclipped = ((adv >= 0) & (ratio < 1 + cfg.clip)) | ((adv < 0) & (ratio > 1 - cfg.clip))
    d_taken = np.where(unclipped, -adv * ratio, 0.0) / n
    d_logits = -prob * d_taken[:, None]
    d_logits[np.arange(n), act] += d_taken
    entropy = -(prob * logp).sum(axis=1)
    d_logits += cfg.entropy_coef * prob * (logp + entropy[:, None]) / n
    d_value = cfg.value_coef * 2 * (value - ret) / n
    g: Params = {
        "wp": h2.T @ d_logits,
        "bp": d_logits.sum(axis=0),
        "wv": h2.T @ d_value[:, None],
        "bv": np.array([d_value.sum()]),
    }
    d_h2 = (d_logits @ p["wp"].T + d_value[:, None] @ p["wv"].T) * (1 - h2**2)
    g["w2"], g["b2"] = h1.T @ d_h2, d_h2.sum(axis=0)
    d_h1 = (d_h2 @ p["w2"].T) * (1 - h1**2)
    g["w1"], g["b1"] = x.T @ d_h1, d_h1.sum(axis=0)
    surrogate = np.minimum(ratio * adv, np.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv)
    stats = {
        "surrogate": float(surrogate.mean()),
        "value_loss": float(((value - ret) ** 2).mean()),
        "entropy": float(entropy.mean()),
        "kl": float(np.mean(old_logp - taken)),
    }
    return g, stats


class Adam:
    """Adam over a parameter dict; its moments are part of the checkpoint."""

    def __init__(self, params: Params, lr: float) -> None:
        self.lr, self.t = lr, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: Params, grads: Params, b1: float = 0.9, b2: float = 0.999) -> None:
        self.t += 1
        for k, g in grads.items():
            self.m[k] = b1 * self.m[k] + (1 - b1) * g
            self.v[k] = b2 * self.v[k] + (1 - b2) * g * g
            m_hat = self.m[k] / (1 - b1**self.t)
            v_hat = self.v[k] / (1 - b2**self.t)
            params[k] -= self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)

    def state(self) -> dict[str, Any]:
        return {"t": self.t, "m": self.m, "v": self.v}

    def load(self, state: dict[str, Any]) -> None:
        self.t, self.m, self.v = int(state["t"]), dict(state["m"]), dict(state["v"])


def ppo_update(
    params: Params, opt: Adam, batch: dict[str, np.ndarray], cfg: PpoConfig,
    rng: np.random.Generator, heads: tuple[str, ...] = (),
) -> dict[str, float]:  # fmt: skip
    """K epochs of minibatch Adam steps on the clipped objective; advantages normalised.

    ``heads`` limits the step to those parameters: ("wv", "bv") fits only the critic's head on
    the frozen trunk, a pre-training that leaves a cloned actor exactly as it is."""
    adv = batch["adv"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    n = len(adv)
    stats: dict[str, float] = {}
    for _ in range(cfg.epochs):
        order = rng.permutation(n)
        for lo in range(0, n, cfg.minibatch):
            i = order[lo : lo + cfg.minibatch]
            grads, stats = gradients(
                params, batch["obs"][i], batch["act"][i], batch["logp"][i], adv[i],
                batch["ret"][i], cfg,
            )  # fmt: skip
            opt.step(params, {k: grads[k] for k in heads} if heads else grads)
            if cfg.target_kl and stats["kl"] > 1.5 * cfg.target_kl:
                return stats
    return stats


def imitate(
    params: Params, obs: np.ndarray, act: np.ndarray, epochs: int, cfg: PpoConfig,
    rng: np.random.Generator, balance: float = 1.0,
) -> float:  # fmt: skip
    """Behaviour cloning of a teacher's actions (cross-entropy on the actor head), a warm start;
    returns the balanced accuracy.

    With the old policy equal to the current one, eq. 7's gradient is that of -w log pi(a|s) for
    an advantage w; w weighs each class by its rarity to the power ``balance`` (1: classes count
    equally, 0: plain cloning), since the teacher's rare actions (release now) matter most.
    Only the actor learns here; PPO then trains the critic along with it.
    """
    teacher = PpoConfig(value_coef=0.0, entropy_coef=0.0, minibatch=cfg.minibatch, lr=cfg.lr)
    opt = Adam(params, cfg.lr)
    counts = np.bincount(act)
    weight = (len(act) / (np.count_nonzero(counts) * counts[act])) ** balance
    weight /= weight.mean()
    zeros = np.zeros(len(act))
    for _ in range(epochs):
        order = rng.permutation(len(act))
        for lo in range(0, len(act), teacher.minibatch):
            i = order[lo : lo + teacher.minibatch]
            now = forward(params, obs[i])[0][np.arange(len(i)), act[i]]
            grads, _ = gradients(params, obs[i], act[i], now, weight[i], zeros[i], teacher)
            opt.step(params, grads)
    hit = np.argmax(forward(params, obs)[0], axis=1) == act
    return float(np.mean([hit[act == a].mean() for a in np.unique(act)]))
