"""``utility-sarsa``: SARSA (paper 002, figure 1) with an MLP Q(s, a) over the five state variables
of sec. III-B and the job descriptors (type, VO, expected execution time) as the action.

The first ``warm_decisions`` decisions follow EDF while their transitions are recorded; then the
network is trained off-line on them for ``sweeps`` passes (sec. III-C) and SARSA takes over with
epsilon-greedy choices, learning online (``learning=incremental``: one back-propagation step per
decision; ``learning=batch``: a fresh network on all examples every ``relearn_every`` decisions).

The reward of starting job j is its time utility per unit of processor time (eq. 1-3 times
sigma / d_j) plus ``fair_weight`` times its VO's share deficit w_k - S_k over M (eq. 4's terms).
The paper leaves the combination open; the utility alone rewards whichever job still has the
most utility left (long batch jobs), while utility per processor minute is what a greedy
allocator on saturated processors can maximise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from plugins.contract.events import AttemptStarted, Event
from plugins.contract.policy import Option, PolicyContext
from plugins.utility.functions import MINUTE
from plugins.utility.ordering import UTILITY_OPTIONS, UtilityOrderingPolicy, edf_deadlines
from plugins.utility.qnet import QNetwork

LEARNING_MODES = ("incremental", "batch")
TARGET_ROUNDS = 3
"""Off-line fits recompute the SARSA targets with the refitted network this many times."""


def _fraction(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else "must be within [0, 1]"


def _mode(value: str) -> str | None:
    return None if value in LEARNING_MODES else f"must be one of {', '.join(LEARNING_MODES)}"


def _at_least_one(value: int) -> str | None:
    return None if value >= 1 else "must be >= 1"


def _not_negative(value: float) -> str | None:
    return None if value >= 0 else "must be >= 0"


SARSA_OPTIONS: dict[str, Option] = {
    **UTILITY_OPTIONS,
    "epsilon": Option(0.3, float, "exploration probability (figure 1)", _fraction),
    "gamma": Option(0.2, float, "discount factor (figure 1)", _fraction),
    "rate": Option(0.3, float, "back-propagation learning rate (sec. V-A)", _fraction),
    "hidden": Option(20, int, "sigmoid units in the hidden layer (sec. V-A)", _at_least_one),
    "learning": Option("incremental", str, "incremental | batch re-learning (sec. III-C)", _mode),
    "relearn_every": Option(250, int, "decisions between batch re-learnings", _at_least_one),
    "sweeps": Option(20, int, "training passes of an off-line or batch fit", _at_least_one),
    "warm_decisions": Option(
        500, int, "first decisions taken by EDF, then learned off-line", _not_negative
    ),
    "fair_weight": Option(0.5, float, "weight of the share deficit in the reward", _not_negative),
}


def _squash(seconds: np.ndarray | float) -> np.ndarray:
    """Times as log minutes scaled near [0, 1], so the sigmoid units do not saturate."""
    return np.log1p(np.asarray(seconds) / MINUTE) / 8.0


class UtilitySarsaPolicy(UtilityOrderingPolicy):
    """SARSA (paper 002, figure 1): an MLP learns the value of starting each waiting job, rewarded
    by its time utility per processor minute and its VO's share deficit; EDF takes the first
    decisions, which train the network off-line before SARSA takes over."""

    NAME = "utility-sarsa"
    OPTIONS: ClassVar[Mapping[str, Option]] = SARSA_OPTIONS

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        self.rng = np.random.default_rng(context.seed)
        groups = len(self.model.groups)
        self.q = QNetwork(
            6 + 2 * groups,
            hidden=self.options["hidden"],
            rate=self.options["rate"],
            seed=context.seed,
        )
        self.decisions = 0
        self.warm = self.options["warm_decisions"] > 0
        self.history_x: list[np.ndarray] = []
        self.history_r: list[float] = []
        self._top_share = max(self.shares.values(), default=0.0) or 1.0
        self._share_vector = np.array([self.shares[g] for g in self.model.groups])

    # --- features and reward -------------------------------------------------------------
    def features(self, now: float, rows: np.ndarray | slice) -> np.ndarray:
        """(s, a) rows: the state of sec. III-B, then type, VO (one-hot) and expected time."""
        m = self.model
        s = m.state(now)
        p = max(m.processors, 1)
        state = np.concatenate([[_squash(s[0]), s[1] / p, _squash(s[2] / p), s[3]], s[4:]])
        w = m.waiting
        n = len(w)
        gi = w.group_index[:n][rows]
        onehot = np.zeros((len(gi), len(m.groups)))
        known = gi >= 0
        onehot[np.flatnonzero(known), gi[known]] = 1.0
        action = np.column_stack(
            [m.interactive()[rows].astype(float), onehot, _squash(w.runtime[:n][rows])]
        )
        return np.hstack([np.broadcast_to(state, (len(action), len(state))), action])

    def reward(self, now: float, row: int) -> float:
        """Utility per processor minute of the started job plus the weighted VO deficit."""
        w = self.model.waiting
        runtime = float(w.runtime[row])
        sigma = self.options["sigma_min"] * MINUTE
        rate = float(self.utilities(now)[row]) * sigma / (runtime + sigma)
        gi = int(w.group_index[row])
        if gi < 0:
            return rate
        got = self.model.received(now).get(self.model.groups[gi], 0.0)
        return rate + self.options["fair_weight"] * (self._share_vector[gi] - got) / self._top_share

    # --- policy protocol -----------------------------------------------------------------
    def scores(self, now: float) -> np.ndarray:
        n = len(self.model.waiting)
        if self.warm:
            return -edf_deadlines(self.model, self.options["sigma_min"])
        q = self.q.predict(self.features(now, slice(0, n)))
        if self.rng.random() < self.options["epsilon"]:
            q[self.rng.integers(n)] = np.inf  # epsilon-greedy: an arbitrary action
        return q

    def observe(self, event: Event) -> None:
        if isinstance(event, AttemptStarted) and event.job_id in self.model.waiting:
            row = self.model.waiting.row(event.job_id)
            x = self.features(event.time, np.array([row]))[0]
            self.learn(x, self.reward(event.time, row))
        super().observe(event)

    def learn(self, x: np.ndarray, r: float) -> None:
        """Figure 1, line 4, with (x, r) the action just taken: the previous pair's target is
        r_prev + gamma Q(s, a)."""
        self.history_x.append(x)
        self.history_r.append(r)
        self.decisions += 1
        if self.warm:
            if self.decisions >= self.options["warm_decisions"]:
                self.fit_history()
                self.warm = False
            return
        if len(self.history_x) < 2:
            return
        if self.options["learning"] == "incremental":
            target = self.history_r[-2] + self.options["gamma"] * self.q.predict(x[None, :])[0]
            self.q.step(self.history_x[-2], np.array([target]))
            del self.history_x[:-1], self.history_r[:-1]
        elif self.decisions % self.options["relearn_every"] == 0:
            self.fit_history()

    def fit_history(self) -> None:
        """Off-line / batch training on the recorded trajectory: SARSA targets
        r_t + gamma Q(s_t+1, a_t+1), recomputed with the improving network each sweep."""
        x = np.array(self.history_x)
        r = np.array(self.history_r)
        gamma = self.options["gamma"]
        for _ in range(TARGET_ROUNDS):
            target = r.copy()
            target[:-1] += gamma * self.q.predict(x[1:])
            self.q.relearn(x, target, sweeps=self.options["sweeps"])
        if self.options["learning"] == "incremental":
            del self.history_x[:-1], self.history_r[:-1]

    def state_dict(self) -> dict[str, Any]:
        return {"q": self.q.state_dict(), "decisions": self.decisions, "warm": self.warm}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.q.load_state(dict(state.get("q", {})))
        self.decisions = int(state.get("decisions", 0))
        self.warm = bool(state.get("warm", self.warm)) and not self.q.fitted
