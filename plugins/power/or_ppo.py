"""``or-ppo``: the learned off-reservation agent (DeepShutdown, paper 001 section 4).

Every minute it picks a reservation size 0..G (from ``levels`` + 1 evenly spaced sizes; levels=G
allows every size) from the stacked last 20 observations; reserved
nodes are switched off and kept from the scheduler; unreserved idle nodes go off after ``base_t``
minutes as under T(t). It runs only a trained agent: option ``agent``, which the host reads from
a train-power file or a shipped name (``advisor.agent_files``) and hands over as weights; a
snapshot's ``load_state`` restores them too. Without one it refuses, rather than act at random.

An agent trained on another cluster size adapts: the observation is size-free (node and core
counts are fractions of the cluster, ``features.py``) and the action is a fraction of it. An
agent whose network reads another observation layout is refused with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from plugins.contract.option_pairs import parse_switch
from plugins.contract.policy import Option, OptionError, PolicyContext
from plugins.power.base import PowerPolicy, idle_longer_than
from plugins.power.features import HISTORY, OBSERVATION_SIZE, History
from plugins.power.ppo import Params, forward
from plugins.power.view import ClusterView, PowerDecision

STATE_NAMES = ("off", "idle", "computing", "switching on", "switching off")
"""In the order of ``plugins.power.view``'s states."""


def _positive(value: int) -> str | None:
    return None if value > 0 else "must be a positive number of units (e.g. 64)"


def _non_negative(value: float) -> str | None:
    return None if value >= 0 else "must be >= 0 minutes (e.g. 0)"


def _agent_name(text: str) -> str | None:
    """A file or shipped name; ``off`` (how a missing agent is listed) is none."""
    return None if text in ("", "off") else text


class OrPpoPolicy(PowerPolicy):
    """Actor of an actor-critic MLP; greedy by default, sampling when ``sample=true`` (training)."""

    NAME = "or-ppo"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "hidden": Option(64, int, "units per hidden layer of the MLP", _positive),
        "levels": Option(8, int, "reservation sizes k*G/levels, k=0..levels (G: all)", _positive),
        "sample": Option(
            False, parse_switch, "sample actions (training) instead of the most likely"
        ),
        "base_t": Option(
            0.0, float, "idle minutes before an unreserved node goes off", _non_negative
        ),
        "agent": Option(
            None,
            _agent_name,
            "trained agent (required): a file train-power wrote, or a shipped name "
            "(nasa, hpc2n); train your own with htcondor-advisor train-power",
        ),
    }

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        self.params: Params | None = None
        self.history = History()
        self.last: tuple[np.ndarray, int, float, float] | None = None
        self.last_view: ClusterView | None = None
        self.trained: dict[str, Any] = {}
        self.restored: dict[str, Any] = {}
        agent = self.options["agent"]
        if not agent:
            raise OptionError(
                "policy 'or-ppo' needs a trained agent: --set agent=PATH (a file train-power "
                "wrote) or a shipped one (agent=nasa, agent=hpc2n); train one with "
                "htcondor-advisor train-power"
            )
        if isinstance(agent, Mapping):  # read by the host; a name alone waits for load_state
            self.load_state(agent)

    def decide(self, view: ClusterView) -> PowerDecision:
        params = self.params
        if params is None:  # a host that forgot ``advisor.agent_files.with_agent``
            raise RuntimeError(f"or-ppo: agent {self.options['agent']!r} was never loaded")
        x = self.history.push(view).astype(np.float32)
        logp, value, _ = forward(params, x)
        if self.options["sample"]:
            cdf = np.cumsum(np.exp(logp))
            action = min(
                int(np.searchsorted(cdf, self.context.rng.random() * cdf[-1])), len(cdf) - 1
            )
        else:
            action = int(np.argmax(logp))
        self.last, self.last_view = (x, action, float(logp[action]), float(value)), view
        reserve = round(action * view.nodes / (len(logp) - 1))
        return PowerDecision(reserve, idle_longer_than(view, 60.0 * self.options["base_t"]))

    def explain(self, machine: str) -> dict[str, Any]:
        """The reservation of the last decision, the action behind it and what the agent saw."""
        if self.last is None or self.last_view is None:
            return self.restored  # rebuilt from a snapshot: its last decision, as saved
        view, (_, action, logp, _) = self.last_view, self.last
        levels, g = self.options["levels"], view.nodes
        counts = np.bincount(view.node_state, minlength=5)
        waiting_min = (view.promise - view.now) / 60.0 if math.isfinite(view.promise) else None
        trained = self.trained.get("cluster", {})
        return {
            "or-ppo decision": {
                "action": f"level {action} of {levels}: reserve {round(action * g / levels)} "
                f"of {g} nodes (probability {math.exp(logp):.2f})",
                "observation": {
                    **{name: int(counts[i]) for i, name in enumerate(STATE_NAMES)},
                    "reserved": int(view.reserved.sum()),
                    "queued jobs": len(view.queue_cores),
                    "first job starts in min": waiting_min,
                },
                "agent": self.trained.get("file", str(self.trained.get("log", "given weights"))),
                "trained for": trained or "not recorded",
            }
        }

    def state_dict(self) -> dict[str, Any]:
        if self.params is None:
            return {}
        weights = {k: v.tolist() for k, v in self.params.items()}
        return {"params": weights, "meta": self.trained, "explained": self.explain("")}

    def load_state(self, state: Mapping[str, Any]) -> None:
        if "params" not in state:
            return
        params = {k: np.asarray(v, dtype=np.float32) for k, v in state["params"].items()}
        self.trained = dict(state.get("meta", self.trained))
        self.restored = dict(state.get("explained", {}))
        width, wanted = params["w1"].shape[0], HISTORY * OBSERVATION_SIZE
        if width != wanted:
            raise OptionError(
                f"or-ppo: agent {self.trained.get('file', '')!r} reads {width} inputs, but this "
                f"or-ppo observes {HISTORY} x {OBSERVATION_SIZE} = {wanted} (another feature "
                "layout): retrain it with htcondor-advisor train-power"
            )
        self.params = params
        self.options["hidden"] = self.params["b1"].shape[0]
        self.options["levels"] = self.params["bp"].shape[0] - 1
