"""Monthly retraining (paper 004 sec. VI-A): to predict month m, fit on everything before m.

Samples are drawn per machine with a generator seeded by (seed, cut-off, machine), so the same
history gives the same models whichever policy or process trains them. Fitting goes through the
driver's ``parallel_map`` (worker processes in the replay and the daemon; builtin map otherwise).
Before refitting, last month's models are scored on last month's samples: the MSE the
``last-month`` and ``best-avg`` ensembles choose by, and the r2 of figure 7.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from plugins.contract.policy import MachineInfo, PolicyContext
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


@dataclass(frozen=True)
class MachineLayout:
    """Each machine's number, codes and group, replaced whole when machines join: a daemon's
    retraining thread reads one layout while a join builds the next (filled in place, a join
    during a retraining made it fail with a KeyError, and last month's models stayed)."""

    index: dict[str, int]
    codes: dict[str, tuple[float, float]]
    group_of: dict[str, str]
    members: dict[str, list[str]]


def layout_of(machines: Mapping[str, MachineInfo], group: str) -> MachineLayout:
    """The scaled codes of sec. V-A3 (they move when machines join; the next retraining fits on
    them) and the groups models are fitted for."""
    names = list(machines)
    clusters = sorted({info.cluster for info in machines.values()})
    cluster_code = _scaled_codes(clusters)
    codes = {}
    for cluster in clusters:
        members = [n for n in names if machines[n].cluster == cluster]
        for name, code in _scaled_codes(members).items():
            codes[name] = (cluster_code[cluster], code)
    group_of = {
        n: n if group == "machine" else (info.cluster if group == "cluster" else "pool")
        for n, info in machines.items()
    }
    by_group: dict[str, list[str]] = {}
    for name, key in group_of.items():
        by_group.setdefault(key, []).append(name)
    return MachineLayout({n: i for i, n in enumerate(names)}, codes, group_of, by_group)


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
        self.layout = layout_of(context.machines, self.group)
        self.trained_until: float | None = None
        self.scores: dict[str, list[tuple[float, float]]] = {}
        self.accuracy: list[dict[str, float | str]] = []
        self.log: list[dict[str, float]] = []

    def index_machines(self) -> None:
        """Lay out every machine in ``context.machines`` again (machines joined a live pool)."""
        self.layout = layout_of(dict(self.context.machines), self.group)

    def samples(
        self, layout: MachineLayout, key: str, until: float, since: float = -np.inf, salt: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Features and targets of a group's idle periods in [since, until)."""
        members = layout.members[key]
        quota = max(1, -(-self.budget.max_samples // len(members)))
        xs, ys = [], []
        for name in members:
            rng = np.random.default_rng([self.context.seed, int(until), layout.index[name], salt])
            x, y = training_samples(
                self.histories[name],
                until,
                layout.codes[name],
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
        layout = self.layout  # (one for the whole retraining, whatever joins meanwhile)
        since = self.trained_until
        if current and since is not None and all(r["month_start"] != since for r in self.accuracy):
            self.score(layout, current, since, now)  # (once: a restart's refit fits again)
        seed = int(np.random.default_rng([self.context.seed, int(now)]).integers(2**31))
        tasks = []
        for key in layout.members:
            x, y = self.samples(layout, key, now)
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
            for h in list(self.histories.values())  # (one call in C, as state_dict's)
        ]
        first = min(firsts, default=np.inf)
        return float(first) if np.isfinite(first) else None

    def score(
        self, layout: MachineLayout, models: Mapping[str, ModelPair], since: float, until: float
    ) -> None:
        for key, pair in models.items():
            if key not in layout.members:
                continue  # (a group of machines no longer laid out)
            x, y = self.samples(layout, key, until, since, salt=1)
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
