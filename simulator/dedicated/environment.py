"""A Gymnasium-style environment over the dedicated simulator, so users can train their own agents.

``PowerEnv`` needs no gymnasium: ``reset(seed)`` returns ``(observation, info)`` and
``step(action)`` returns ``(observation, reward, terminated, truncated, info)`` as Gymnasium does.
``gymnasium_env(...)`` wraps it in a real ``gymnasium.Env`` (install the ``[gym]`` extra).
An action is the reservation size 0..G; unreserved idle nodes go off at once (T(0) base).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plugins.power.base import idle_longer_than, node_advice
from plugins.power.features import HISTORY, OBSERVATION_SIZE, History
from plugins.power.view import PowerDecision
from simulator.dedicated.days import Day
from simulator.dedicated.episode import DayEpisode


class PowerEnv:
    """One episode is one day drawn uniformly from ``days`` (pass training days only)."""

    def __init__(self, days: list[Day]) -> None:
        if not days:
            raise ValueError("PowerEnv needs at least one day")
        self.days = days
        self.nodes = days[0].jobs.nodes
        self.observation_size = HISTORY * OBSERVATION_SIZE
        self.rng = np.random.default_rng()
        self.episode: DayEpisode | None = None
        self.history = History()

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        day = self.days[int(self.rng.integers(len(self.days)))]
        self.episode = DayEpisode(day.jobs)
        self.history = History()
        return self.history.push(self.episode.view()), {"day": day.index}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if not 0 <= int(action) <= self.nodes:
            raise ValueError(f"action {action} is not a reservation size in 0..{self.nodes}")
        view = self.episode.view()
        decision = PowerDecision(int(action), idle_longer_than(view, 0.0))
        reward = self.episode.step(node_advice(view, decision))
        obs = self.history.push(self.episode.view())
        done = self.episode.done
        return obs, reward, done, False, {"metrics": self.episode.metrics()} if done else {}


def gymnasium_env(days: list[Day]) -> Any:
    """A ``gymnasium.Env`` around ``PowerEnv`` (needs ``pip install htcondor-advisor[gym]``)."""
    import gymnasium
    from gymnasium import spaces

    class GymPowerEnv(gymnasium.Env):
        def __init__(self) -> None:
            self.core = PowerEnv(days)
            self.action_space = spaces.Discrete(self.core.nodes + 1)
            size = self.core.observation_size
            self.observation_space = spaces.Box(-2.0, 2.0, (size,), dtype=np.float64)

        def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
            super().reset(seed=seed)
            return self.core.reset(seed)

        def step(self, action: Any) -> Any:
            return self.core.step(int(action))

    return GymPowerEnv()
