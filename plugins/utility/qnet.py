"""Q(s, a) as a multilayer perceptron: one hidden layer of sigmoid units, plain SGD back-propagation
(paper 002, sec. III-C and V-A), trained by scikit-learn's MLPRegressor.

Prediction runs the forward pass on the fitted weights in numpy (sklearn's input validation
costs more than the arithmetic at one decision per call); training is sklearn's ``partial_fit``
(one SGD step per example: incremental learning) or a fresh network fitted on every example so
far (batch re-learning).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # scikit-learn takes a second to import: only a network being built needs it
    from sklearn.neural_network import MLPRegressor

MINIBATCH = 32
"""Examples per SGD step when re-learning from all examples."""


class QNetwork:
    """An MLP value function with ``hidden`` sigmoid units and back-propagation rate ``rate``."""

    def __init__(self, inputs: int, *, hidden: int = 20, rate: float = 0.3, seed: int = 0) -> None:
        self.inputs, self.hidden, self.rate, self.seed = inputs, hidden, rate, seed
        self.net = self._fresh()
        self.fitted = False

    def _fresh(self) -> MLPRegressor:
        from sklearn.neural_network import MLPRegressor

        return MLPRegressor(
            hidden_layer_sizes=(self.hidden,),
            activation="logistic",
            solver="sgd",
            learning_rate_init=self.rate,
            momentum=0.0,
            batch_size="auto",
            random_state=self.seed,
        )

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Q for each row of ``x`` (zeros before any training: "initialise Q arbitrarily")."""
        if not self.fitted:
            return np.zeros(len(x))
        w1, w2 = self.net.coefs_
        b1, b2 = self.net.intercepts_
        hidden = 1.0 / (1.0 + np.exp(-(x @ w1 + b1)))
        return (hidden @ w2 + b2)[:, 0]

    def step(self, x: np.ndarray, target: np.ndarray) -> None:
        """Incremental learning: one back-propagation pass over these examples."""
        self.net.partial_fit(np.atleast_2d(x), np.atleast_1d(target))
        self.fitted = True

    def relearn(self, x: np.ndarray, target: np.ndarray, sweeps: int) -> None:
        """Batch re-learning: a fresh network trained for ``sweeps`` passes over all examples."""
        fresh = self._fresh()
        order = np.random.default_rng(self.seed)
        for _ in range(sweeps):
            shuffled = order.permutation(len(x))
            for chunk in np.array_split(shuffled, max(1, len(x) // MINIBATCH)):
                fresh.partial_fit(x[chunk], target[chunk])
        self.net = fresh  # one assignment: a concurrent advise sees the old or the new network
        self.fitted = True

    def state_dict(self) -> dict[str, Any]:
        if not self.fitted:
            return {}
        return {
            "coefs": [w.tolist() for w in self.net.coefs_],
            "intercepts": [b.tolist() for b in self.net.intercepts_],
        }

    def load_state(self, state: dict[str, Any]) -> None:
        if not state:
            return
        net = self._fresh()
        net.partial_fit(np.zeros((1, self.inputs)), np.zeros(1))  # builds the layers
        net.coefs_ = [np.array(w) for w in state["coefs"]]
        net.intercepts_ = [np.array(b) for b in state["intercepts"]]
        self.net = net
        self.fitted = True
