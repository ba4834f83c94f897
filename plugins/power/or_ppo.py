"""``or-ppo``: the learned off-reservation agent (DeepShutdown, paper 001 section 4).

Every minute it picks a reservation size 0..G (from ``levels`` + 1 evenly spaced sizes; levels=G
allows every size) from the stacked last 20 observations; reserved
nodes are switched off and kept from the scheduler; unreserved idle nodes go off after ``base_t``
minutes as under T(t). Weights come from ``train-power`` through ``load_state``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from plugins.contract.policy import Option, PolicyContext
from plugins.power.base import PowerPolicy, idle_longer_than
from plugins.power.features import HISTORY, OBSERVATION_SIZE, History
from plugins.power.ppo import Params, forward, init_params
from plugins.power.view import ClusterView, PowerDecision


def _positive(value: int) -> str | None:
    return None if value > 0 else "must be a positive number of units (e.g. 64)"


def _non_negative(value: float) -> str | None:
    return None if value >= 0 else "must be >= 0 minutes (e.g. 0)"


def _on_off(text: str) -> bool:
    if text.lower() not in {"true", "false", "1", "0", "yes", "no"}:
        raise ValueError("use true or false")
    return text.lower() in {"true", "1", "yes"}


class OrPpoPolicy(PowerPolicy):
    """Actor of an actor-critic MLP; greedy by default, sampling when ``sample=true`` (training)."""

    NAME = "or-ppo"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "hidden": Option(64, int, "units per hidden layer of the MLP", _positive),
        "levels": Option(8, int, "reservation sizes k*G/levels, k=0..levels (G: all)", _positive),
        "sample": Option(False, _on_off, "sample actions (training) instead of the most likely"),
        "base_t": Option(
            0.0, float, "idle minutes before an unreserved node goes off", _non_negative
        ),
    }

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        self.params: Params | None = None
        self.history = History()
        self.last: tuple[np.ndarray, int, float, float] | None = None

    def ensure_params(self, nodes: int) -> Params:
        """The weights, made at random (seeded) for ``nodes`` when none were loaded."""
        if self.params is None:
            self.params = init_params(
                HISTORY * OBSERVATION_SIZE, self.options["hidden"], self.options["levels"] + 1,
                self.context.rng, favour=(0, self.options["levels"]),
            )  # fmt: skip
        return self.params

    def decide(self, view: ClusterView) -> PowerDecision:
        params = self.ensure_params(view.nodes)
        x = self.history.push(view).astype(np.float32)
        logp, value, _ = forward(params, x)
        if self.options["sample"]:
            cdf = np.cumsum(np.exp(logp))
            action = min(
                int(np.searchsorted(cdf, self.context.rng.random() * cdf[-1])), len(cdf) - 1
            )
        else:
            action = int(np.argmax(logp))
        self.last = (x, action, float(logp[action]), float(value))
        reserve = round(action * view.nodes / (len(logp) - 1))
        return PowerDecision(reserve, idle_longer_than(view, 60.0 * self.options["base_t"]))

    def state_dict(self) -> dict[str, Any]:
        if self.params is None:
            return {}
        return {"params": {k: v.tolist() for k, v in self.params.items()}}

    def load_state(self, state: Mapping[str, Any]) -> None:
        if "params" in state:
            self.params = {k: np.asarray(v, dtype=np.float32) for k, v in state["params"].items()}
            self.options["hidden"] = self.params["b1"].shape[0]
            self.options["levels"] = self.params["bp"].shape[0] - 1
