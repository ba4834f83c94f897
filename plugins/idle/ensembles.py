"""Ensembles of the RF and MLP predictions (paper 004 sec. V-D).

``max``/``min``/``avg`` combine the two predictions; ``last-month`` uses the model with the lower
MSE over the month just ended, ``best-avg`` the one with the lower MSE averaged over every scored
month. Before any month has been scored both fall back to the average (said in the summary).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RULES = ("rf", "mlp", "max", "min", "avg", "last-month", "best-avg")


def pick_model(rule: str, mse_history: Sequence[tuple[float, float]]) -> str:
    """Which prediction a rule uses for one group: ``rf``, ``mlp``, ``max``, ``min`` or ``avg``."""
    if rule in ("rf", "mlp", "max", "min", "avg"):
        return rule
    scored = [(rf, mlp) for rf, mlp in mse_history if np.isfinite(rf) and np.isfinite(mlp)]
    if not scored:
        return "avg"
    if rule == "last-month":
        rf, mlp = scored[-1]
    elif rule == "best-avg":
        rf, mlp = np.mean(scored, axis=0)
    else:
        raise ValueError(f"unknown ensemble rule {rule!r} (rules: {', '.join(RULES)})")
    return "rf" if rf <= mlp else "mlp"


def combine(choice: str, rf: np.ndarray, mlp: np.ndarray) -> np.ndarray:
    """The ensemble prediction for a picked model (``pick_model``)."""
    if choice == "rf":
        return rf
    if choice == "mlp":
        return mlp
    if choice == "max":
        return np.maximum(rf, mlp)
    if choice == "min":
        return np.minimum(rf, mlp)
    return (rf + mlp) / 2.0
