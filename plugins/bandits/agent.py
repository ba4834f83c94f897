"""An n-armed bandit per state: value estimates, epsilon-greedy choice (paper 000 eq. 6) and the
epsilon variants of sec. 4.4.2. Shared by the placement and the replica-count policies."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from itertools import repeat
from typing import Any, TypeAlias

import numpy as np

from plugins.bandits.history import Estimate, HistorySpec, parse_history
from plugins.bandits.options import EpsilonBoost

Values: TypeAlias = np.ndarray | list[float]
"""q'(s, a) of some actions, NaN for untried ones: a list for a few actions (there numpy's cost
per call exceeds what its vector speed saves), an array for many; both give the same choices."""
Positions: TypeAlias = np.ndarray | list[int]
"""Places among the indexed actions, a list or an array as ``Values``."""


class StateStats:
    """Per-state counters for the epsilon variants: rewards seen, the best one, the recent ones."""

    __slots__ = ("best", "recent", "rewards")

    def __init__(self, recent: int) -> None:
        self.rewards = 0
        self.best = -np.inf
        self.recent: deque[float] = deque(maxlen=max(recent, 1))


class BanditAgent:
    """Estimates ``q'(s, a)`` and chooses actions; states and actions are any hashable keys."""

    def __init__(
        self,
        history: HistorySpec,
        epsilon: float,
        untried_zero: bool = True,
        initial: EpsilonBoost | None = None,
        diverge: EpsilonBoost | None = None,
    ) -> None:
        self.history = history
        self.epsilon = epsilon
        self.untried_zero = untried_zero
        self.initial = initial
        self.diverge = diverge
        self.estimates: dict[Hashable, dict[Hashable, Estimate]] = {}
        self.values: dict[Hashable, dict[Hashable, float]] = {}
        self.stats: dict[Hashable, StateStats] = {}
        self.index: dict[Hashable, int] = {}
        """Actions also kept as arrays (see ``index_actions``), by position."""
        self.indexed: list[Hashable] = []
        self.arrays: dict[Hashable, np.ndarray] = {}

    def index_actions(self, actions: Sequence[Hashable]) -> None:
        """Keep the values of ``actions`` per state as one array too, so that a decision
        among a thousand machines is a few vector operations."""
        self.index = {a: i for i, a in enumerate(actions)}
        self.indexed = list(actions)
        self.arrays = {}
        for state, values in self.values.items():
            for action, value in values.items():
                self._store(state, action, value)

    @property
    def _untried(self) -> float:
        """An untried action's value in the arrays: ``value``'s, NaN for None."""
        return 0.0 if self.untried_zero else np.nan

    def array(self, state: Hashable) -> np.ndarray:
        """The values of the indexed actions in ``state`` (untried: as ``value`` has them, NaN
        for None); do not modify."""
        found = self.arrays.get(state)
        return found if found is not None else np.full(len(self.index), self._untried)

    def _store(self, state: Hashable, action: Hashable, value: float) -> None:
        i = self.index.get(action)
        if i is not None:
            row = self.arrays.get(state)
            if row is None:
                row = self.arrays[state] = np.full(len(self.index), self._untried)
            row[i] = value

    def reward(self, state: Hashable, action: Hashable, reward: float) -> None:
        stats = self.stats.get(state)
        if stats is None:  # a state's first reward
            stats = self.stats[state] = StateStats(self.diverge.n if self.diverge else 1)
            self.estimates[state], self.values[state] = {}, {}
        per_state = self.estimates[state]
        est = per_state.get(action)
        if est is None:
            est = per_state[action] = Estimate(self.history)
        est.add(reward)
        value = self.values[state][action] = est.value
        if self.index:
            self._store(state, action, value)
        stats.rewards += 1
        if reward > stats.best:
            stats.best = reward
        stats.recent.append(reward)

    def value(self, state: Hashable, action: Hashable) -> float | None:
        """``q'(s, a)``; None for an untried action unless untried actions are valued at 0."""
        found = self.values.get(state, {}).get(action)
        if found is None and self.untried_zero:
            return 0.0
        return found

    def values_of(self, state: Hashable, actions: Sequence[Hashable]) -> list[float | None]:
        """``value`` of each action, in one pass (a computer bandit has an action per machine)."""
        default = 0.0 if self.untried_zero else None
        return list(map(self.values.get(state, {}).get, actions, repeat(default)))

    def epsilon_for(self, state: Hashable) -> float:
        """Sec. 4.4.2: high while a state is young, raised while its rewards trail the best."""
        stats = self.stats.get(state)
        rewards = stats.rewards if stats else 0
        if self.initial is not None and rewards < self.initial.n:
            return self.initial.epsilon
        div = self.diverge
        if div is None or stats is None or len(stats.recent) < div.n or stats.best <= 0:
            return self.epsilon
        if sum(stats.recent) / len(stats.recent) < div.ratio * stats.best:
            return max(self.epsilon, div.epsilon)
        return self.epsilon

    def choose(
        self, state: Hashable, actions: Sequence[Hashable], rng: np.random.Generator
    ) -> tuple[Hashable, bool]:
        """Eq. 6 over the available ``actions``: (action, explored)."""
        place, explored, _ = self.choose_among(state, self._array_of(state, actions), rng, False)
        return actions[place], explored

    def greedy(
        self, state: Hashable, actions: Sequence[Hashable], rng: np.random.Generator
    ) -> Hashable:
        """The action with the highest estimate (ties and all-untried broken at random)."""
        return actions[self._greedy_place(self._array_of(state, actions), rng)]

    def _array_of(self, state: Hashable, actions: Sequence[Hashable]) -> list[float]:
        return [np.nan if v is None else v for v in self.values_of(state, actions)]

    def values_at(self, state: Hashable, positions: Positions, then: float) -> Values:
        """``value`` of the indexed actions at ``positions`` (NaN for None), then ``then``: a new
        list for a list of positions, else a new array."""
        if isinstance(positions, list):
            got, indexed = self.values.get(state, {}).get, self.indexed
            default = self._untried
            values = [got(indexed[p], default) for p in positions]
            values.append(then)
            return values
        out = np.empty(len(positions) + 1)
        # taken in place (no concatenation); "clip" skips the copy "raise" takes, and the
        # positions are all valid
        self.array(state).take(positions, out=out[:-1], mode="clip")
        out[-1] = then
        return out

    def choose_among(
        self, state: Hashable, values: Values, rng: np.random.Generator, greedy_too: bool
    ) -> tuple[int, bool, int]:
        """Eq. 6 over actions whose ``value``s are ``values`` (NaN for None): (choice, explored,
        greedy) as places in that array; an exploring draw finds the greedy place too (drawn
        after it, -1) only when ``greedy_too``."""
        explored = bool(rng.random() < self.epsilon_for(state))
        if explored:
            choice = int(rng.integers(len(values)))
            return choice, True, self._greedy_place(values, rng) if greedy_too else -1
        greedy = self._greedy_place(values, rng)
        return greedy, False, greedy

    def _greedy_place(self, values: Values, rng: np.random.Generator) -> int:
        """The place of the highest value (ties, and all untried, broken at random)."""
        best: Sequence[int] | np.ndarray
        if isinstance(values, list):
            known = [v for v in values if v == v]  # NaN: untried
            top = max(known) if known else np.nan
            best = [i for i, v in enumerate(values) if v == top] or range(len(values))
            return best[0] if len(best) == 1 else best[int(rng.integers(len(best)))]
        tried = None if self.untried_zero else ~np.isnan(values)  # untried_zero: no NaN
        if tried is None:  # the value at argmax is max's (NaN too), at a third of the cost
            best = (values == values[values.argmax()]).nonzero()[0]
        elif tried.any():
            best = (values == values[tried].max()).nonzero()[0]
        else:
            best = np.arange(len(values))
        return int(best[0]) if len(best) == 1 else int(best[int(rng.integers(len(best)))])

    def state_dict(self) -> dict[str, Any]:
        return {
            "history": str(self.history),
            "estimates": [
                [json_key(s), [[json_key(a), est.state()] for a, est in acts.items()]]
                for s, acts in self.estimates.items()
            ],
            "stats": [
                [json_key(s), st.rewards, st.best, list(st.recent)] for s, st in self.stats.items()
            ],
        }

    def load_state(self, saved: dict[str, Any]) -> None:
        self.estimates, self.values, self.stats = {}, {}, {}
        kept = parse_history(saved["history"]) if "history" in saved else None
        for s, acts in saved["estimates"]:
            state = from_json_key(s)
            per = self.estimates[state] = {}
            vals = self.values[state] = {}
            for a, est in acts:
                action = from_json_key(a)
                per[action] = Estimate.restore(self.history, est, kept)
                vals[action] = per[action].value
        for s, rewards, best, recent in saved["stats"]:
            st = self.stats[from_json_key(s)] = StateStats(self.diverge.n if self.diverge else 1)
            st.rewards, st.best = int(rewards), float(best)
            st.recent.extend(float(r) for r in recent)
        self.index_actions(list(self.index))


def json_key(key: Hashable) -> Any:
    """A state or action as JSON data (tuples become lists)."""
    return list(key) if isinstance(key, tuple) else key


def from_json_key(data: Any) -> Hashable:
    return tuple(data) if isinstance(data, list) else data
