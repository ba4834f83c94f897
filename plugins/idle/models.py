"""RandomForest and MLP idle-time regressors (paper 004 sec. V-B, V-C) and fast predictors.

``fit_pair`` is pure and module-level so a driver can map it over machines in worker processes.
scikit-learn's ``predict`` costs milliseconds per call for a single row, so prediction runs on
numpy copies of the fitted trees and weights (``FastForest``, ``FastMLP``): a few microseconds.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from plugins.idle.history import DAY

if TYPE_CHECKING:  # scikit-learn takes a second to import: only ``fit_pair`` needs it
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.neural_network import MLPRegressor

MLP_LAYERS = (18, 14, 9, 10)
"""The hidden layers the paper found best, with ReLU and Adam (sec. VI-B3)."""


@dataclass(frozen=True)
class TrainingBudget:
    """Sizes that keep a monthly retraining of ~1,400 machines within minutes on 2 cores."""

    max_samples: int = 500
    trees: int = 10
    max_depth: int = 10
    mlp_epochs: int = 20


@dataclass(frozen=True)
class FitTask:
    """One model group (a machine, a cluster or the pool) and its training samples."""

    key: str
    x: np.ndarray
    y: np.ndarray
    seed: int
    budget: TrainingBudget


class FastForest:
    """All trees of a fitted forest as flat arrays, walked for every tree at once."""

    def __init__(self, forest: RandomForestRegressor) -> None:
        trees = [est.tree_ for est in forest.estimators_]
        offsets = np.cumsum([0] + [t.node_count for t in trees[:-1]])
        self.left = np.concatenate(
            [
                np.where(t.children_left < 0, -1, t.children_left + o)
                for t, o in zip(trees, offsets, strict=True)
            ]
        )
        self.right = np.concatenate(
            [
                np.where(t.children_right < 0, -1, t.children_right + o)
                for t, o in zip(trees, offsets, strict=True)
            ]
        )
        self.feature = np.concatenate([np.maximum(t.feature, 0) for t in trees])
        self.threshold = np.concatenate([t.threshold for t in trees])
        self.value = np.concatenate([t.value.ravel() for t in trees])
        self.roots = offsets
        self.depth = max(t.max_depth for t in trees)
        self._lists = (
            self.left.tolist(),
            self.right.tolist(),
            self.feature.tolist(),
            self.threshold.tolist(),
            self.value.tolist(),
            self.roots.tolist(),
        )

    def predict_one(self, row: list[float]) -> float:
        """``predict`` for one row in plain Python (microseconds instead of numpy's overhead)."""
        left, right, feature, threshold, value, roots = self._lists
        total = 0.0
        for node in roots:
            while left[node] >= 0:
                node = left[node] if row[feature[node]] <= threshold[node] else right[node]
            total += value[node]
        return total / len(roots)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Mean over trees of the leaf each row reaches; ``x`` is (rows, features)."""
        nodes = np.broadcast_to(self.roots, (len(x), len(self.roots))).copy()
        rows = np.arange(len(x))[:, None]
        for _ in range(self.depth):
            left = self.left[nodes]
            go_left = x[rows, self.feature[nodes]] <= self.threshold[nodes]
            nxt = np.where(go_left, left, self.right[nodes])
            nodes = np.where(left < 0, nodes, nxt)
        return self.value[nodes].mean(axis=1)


class FastMLP:
    """The MLP's weights: ReLU hidden layers and an identity output, as scikit-learn's."""

    def __init__(self, mlp: MLPRegressor) -> None:
        self.weights = [np.asarray(w) for w in mlp.coefs_]
        self.biases = [np.asarray(b) for b in mlp.intercepts_]

    def predict(self, x: np.ndarray) -> np.ndarray:
        h = x
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            h = np.maximum(h @ w + b, 0.0)
        return (h @ self.weights[-1] + self.biases[-1]).ravel()


@dataclass
class ModelPair:
    """The fitted RF and MLP of one group; targets are idle seconds scaled by a day."""

    key: str
    rf: RandomForestRegressor
    mlp: MLPRegressor
    samples: int

    def __post_init__(self) -> None:
        self.fast_rf = FastForest(self.rf)
        self.fast_mlp = FastMLP(self.mlp)

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(RF, MLP) predicted remaining idle seconds for each row of ``x``."""
        return self.fast_rf.predict(x) * DAY, self.fast_mlp.predict(x) * DAY

    def predict_one(self, row: list[float]) -> tuple[float, float]:
        """(RF, MLP) for a single feature row, the advice's hot path."""
        mlp = float(self.fast_mlp.predict(np.array([row]))[0])
        return self.fast_rf.predict_one(row) * DAY, mlp * DAY

    def __getstate__(self) -> dict[str, object]:
        return {"key": self.key, "rf": self.rf, "mlp": self.mlp, "samples": self.samples}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.__post_init__()


def fit_pair(task: FitTask) -> ModelPair:
    """Fit both regressors on one group's samples (pure: same task, same models)."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor

    budget = task.budget
    y = task.y / DAY
    rf = RandomForestRegressor(
        n_estimators=budget.trees,
        max_depth=budget.max_depth,
        min_samples_leaf=3,
        random_state=task.seed,
        n_jobs=1,
    ).fit(task.x, y)
    mlp = MLPRegressor(
        hidden_layer_sizes=MLP_LAYERS,
        activation="relu",
        solver="adam",
        max_iter=budget.mlp_epochs,
        batch_size=min(100, len(y)),
        random_state=task.seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp.fit(task.x, y)
    return ModelPair(task.key, rf, mlp, len(y))
