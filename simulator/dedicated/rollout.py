"""Experience for PPO: run the sampling agent through whole days and keep what eq. 6-7 need."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plugins.contract.policy import PolicyContext
from plugins.power.base import node_advice
from plugins.power.features import History
from plugins.power.or_oracle import OrOraclePolicy
from plugins.power.or_ppo import OrPpoPolicy
from plugins.power.ppo import Params, PpoConfig, gae
from plugins.power.view import OFF, SWITCHING_OFF
from simulator.dedicated.episode import DayEpisode, DayMetrics, EpisodeOracle
from simulator.dedicated.workload import Workload


@dataclass
class Rollout:
    obs: np.ndarray
    act: np.ndarray
    logp: np.ndarray
    adv: np.ndarray
    ret: np.ndarray
    episode_return: float
    metrics: DayMetrics


def run_day(params: Params, jobs: Workload, seed: int, cfg: PpoConfig) -> Rollout:
    """One day under the sampling agent; the day's end is terminal (fixed 1440 steps)."""
    agent = OrPpoPolicy(PolicyContext({}, seed=seed), {"sample": True, "agent": {"params": params}})
    episode = DayEpisode(jobs)
    obs, act, logp, val, rew = [], [], [], [], []
    while not episode.done:
        view = episode.view()
        advice = agent.advise(view, view.now)
        assert agent.last is not None
        x, a, lp, v = agent.last
        obs.append(x)
        act.append(a)
        logp.append(lp)
        val.append(v)
        rew.append(episode.step(advice))
    rewards = np.array(rew)
    adv, ret = gae(rewards * cfg.reward_scale, np.array(val), 0.0, cfg.gamma, cfg.lam)
    return Rollout(
        np.array(obs, dtype=np.float32), np.array(act), np.array(logp), adv, ret,
        float(rewards.sum()), episode.metrics(),
    )  # fmt: skip


def teacher_day(
    jobs: Workload, levels: int, student: Params | None = None, graded: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Observations and OR*'s choices on one training day, as action levels for a warm start.

    OR* either holds every off node (level ``levels``) or releases some for a job at its deadline
    (level 0: release, the scheduler then wakes only what the first job needs). ``graded`` labels
    a release with the largest level that still releases what OR* does (reserve // step), so
    the clone keeps the other jobs waiting as OR* does instead of letting all of them start.
    With ``student`` weights the greedy student drives the day and OR* only labels the states
    it visits (DAgger), so the clone also learns to recover from its own mistakes.
    """
    teacher = OrOraclePolicy(PolicyContext({}))
    episode = DayEpisode(jobs)
    teacher.bind_oracle(EpisodeOracle(episode))
    driver = None
    if student is not None:
        driver = OrPpoPolicy(PolicyContext({}), {"agent": {"params": student}})
    history = History()
    obs, act = [], []
    while not episode.done:
        view = episode.view()
        decision = teacher.decide(view)
        obs.append(history.push(view).astype(np.float32))
        off_like = view.count(OFF) + view.count(SWITCHING_OFF) + len(decision.switch_off)
        if decision.reserve >= off_like:
            act.append(levels)
        else:
            act.append(decision.reserve * levels // view.nodes if graded else 0)
        episode.step(
            node_advice(view, decision) if driver is None else driver.advise(view, view.now)
        )
    return np.array(obs), np.array(act)
