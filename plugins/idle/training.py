"""Monthly retraining (paper 004 sec. VI-A): to predict month m, fit on everything before m.

Samples are drawn per machine with a generator seeded by (seed, cut-off, machine), so the same
history gives the same models whichever policy or process trains them. Fitting goes through the
driver's ``parallel_map`` (worker processes in the replay and the daemon; builtin map otherwise).
Before refitting, last month's models are scored on last month's samples: the MSE the
``last-month`` and ``best-avg`` ensembles choose by, and the r2 of figure 7.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from plugins.contract.policy import PolicyContext
from plugins.idle.features import Calendar, training_samples
from plugins.idle.history import DAY, MachineHistory
from plugins.idle.models import FitTask, ModelPair, TrainingBudget, fit_pair

MIN_SAMPLES = 10


def _scaled_codes(names: list[str]) -> dict[str, float]:
    """Integer codes divided by their largest value (sec. V-A3)."""
    top = max(len(names) - 1, 1)
    return {name: i / top for i, name in enumerate(names)}


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    total = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - pred) ** 2).sum()) / total if total > 0 else float("nan")


class IdleTrainer:
    """Turns the machines' histories into fitted model groups, and keeps their monthly scores."""

    def __init__(
        self,
        context: PolicyContext,
        options: Mapping[str, Any],
        histories: Mapping[str, MachineHistory],
    ) -> None:
        self.context = context
        self.histories = histories
        self.feature_names: tuple[str, ...] = tuple(options["features"])
        self.delta = float(options["delta_min"]) * 60.0
        self.budget = TrainingBudget(
            options["max_samples"], options["trees"], options["max_depth"], options["mlp_epochs"]
        )
        self.calendar = Calendar.of(context.terms)
        self.group = options["group"]
        self.index: dict[str, int] = {}
        self.codes: dict[str, tuple[float, float]] = {}
        self.group_of: dict[str, str] = {}
        self.members: dict[str, list[str]] = {}
        self.index_machines()
        self.trained_until: float | None = None
        self.scores: dict[str, list[tuple[float, float]]] = {}
        self.accuracy: list[dict[str, float | str]] = []
        self.log: list[dict[str, float]] = []

    def index_machines(self) -> None:
        """Codes and groups of every machine in ``context.machines`` (again when machines join
        a live pool: the scaled codes of sec. V-A3 move, the next retraining fits on them)."""
        machines = self.context.machines
        names = list(machines)
        self.index = {name: i for i, name in enumerate(names)}
        clusters = sorted({info.cluster for info in machines.values()})
        cluster_code = _scaled_codes(clusters)
        self.codes = {}
        for cluster in clusters:
            members = [n for n in names if machines[n].cluster == cluster]
            for name, code in _scaled_codes(members).items():
                self.codes[name] = (cluster_code[cluster], code)
        group = self.group
        self.group_of = {
            n: n if group == "machine" else (info.cluster if group == "cluster" else "pool")
            for n, info in machines.items()
        }
        self.members = {}
        for name, key in self.group_of.items():
            self.members.setdefault(key, []).append(name)

    def samples(
        self, key: str, until: float, since: float = -np.inf, salt: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Features and targets of a group's idle periods in [since, until)."""
        members = self.members[key]
        quota = max(1, -(-self.budget.max_samples // len(members)))
        xs, ys = [], []
        for name in members:
            rng = np.random.default_rng([self.context.seed, int(until), self.index[name], salt])
            x, y = training_samples(
                self.histories[name],
                until,
                self.codes[name],
                self.calendar,
                self.feature_names,
                self.delta,
                quota,
                rng,
                since,
            )
            xs.append(x)
            ys.append(y)
        return np.concatenate(xs), np.concatenate(ys)

    def train(self, now: float, current: Mapping[str, ModelPair]) -> dict[str, ModelPair]:
        """New models on everything before ``now`` (scoring ``current`` on the month just ended)."""
        if current and self.trained_until is not None:
            self.score(current, self.trained_until, now)
        seed = int(np.random.default_rng([self.context.seed, int(now)]).integers(2**31))
        tasks = []
        for key in self.members:
            x, y = self.samples(key, now)
            if len(y) >= MIN_SAMPLES:
                tasks.append(FitTask(key, x, y, seed, self.budget))
        mapper = self.context.parallel_map or map
        fitted = list(mapper(fit_pair, tasks))
        first = self._first_seen()
        self.log.append(
            {
                "until": now,
                "history_days": (now - first) / DAY if first is not None else 0.0,
                "groups": float(len(fitted)),
                "samples": float(sum(p.samples for p in fitted)),
            }
        )
        self.trained_until = now
        return {pair.key: pair for pair in fitted}

    def _first_seen(self) -> float | None:
        firsts = [
            min(h.logins[0] if h.logins else np.inf, h.reboots[0] if h.reboots else np.inf)
            for h in self.histories.values()
        ]
        first = min(firsts, default=np.inf)
        return float(first) if np.isfinite(first) else None

    def score(self, models: Mapping[str, ModelPair], since: float, until: float) -> None:
        for key, pair in models.items():
            x, y = self.samples(key, until, since, salt=1)
            if len(y) < 2:
                continue
            rf, mlp = pair.predict(x)
            mse = (float(np.mean((rf - y) ** 2)), float(np.mean((mlp - y) ** 2)))
            self.scores.setdefault(key, []).append(mse)
            self.accuracy.append(
                {
                    "month_start": since,
                    "group": key,
                    "samples": float(len(y)),
                    "mse_rf": mse[0],
                    "mse_mlp": mse[1],
                    "r2_rf": _r2(y, rf),
                    "r2_mlp": _r2(y, mlp),
                }
            )

    def state_dict(self) -> dict[str, Any]:
        """Copies, taken whole: a daemon's snapshot thread asks while its retraining thread may
        be adding scores (iterating the dict itself then failed the snapshot)."""
        scores = list(self.scores.items())  # (one call in C: no other thread runs meanwhile)
        return {
            "trained_until": self.trained_until,
            "scores": {k: [list(s) for s in list(v)] for k, v in scores},
            "accuracy": list(self.accuracy),
            "log": list(self.log),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.trained_until = state["trained_until"]
        self.scores = {k: [(a, b) for a, b in v] for k, v in state["scores"].items()}
        self.accuracy = list(state["accuracy"])
        self.log = list(state["log"])
