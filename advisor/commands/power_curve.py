"""The learning curve of ``train-power``: training-day return and waste per PPO iteration, and
the greedy agent's waste on the validation days (which picks the shipped agent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def plot_curve(
    curve: list[dict[str, float]], png: Path, title: str, validation: dict[str, Any] | None = None
) -> None:
    """Episode return and daily waste per iteration with a 10-iteration moving average; with
    ``validation``, a third panel: validation waste per day against T(0)'s, the kept one starred."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not curve:
        return
    it = [c["iteration"] for c in curve]
    history = [h for h in (validation or {}).get("history", []) if h["label"].startswith("iter")]
    fig, axes = plt.subplots(1, 3 if history else 2, figsize=(15 if history else 10, 3.5))
    for ax, key, label in zip(
        axes, ("return", "waste_kj"), ("episode return", "waste kJ/day"), strict=False
    ):
        y = np.array([c[key] for c in curve])
        ax.plot(it, y, alpha=0.3)
        k = min(10, len(y))
        ax.plot(it[k - 1 :], np.convolve(y, np.ones(k) / k, mode="valid"))
        ax.set_xlabel("iteration")
        ax.set_ylabel(label)
    if history and validation is not None:
        days = len(validation["days"])
        x = [int(h["label"].split()[-1]) for h in history]
        axes[2].plot(x, [h["waste_kj"] / days for h in history], marker="o", label="or-ppo")
        axes[2].axhline(validation["t0"]["waste_kj"] / days, color="grey", ls="--", label="T(0)")
        best = validation["best"]
        if best["label"].startswith("iter"):
            axes[2].plot(int(best["label"].split()[-1]), best["waste_kj"] / days, "r*", ms=14)
        axes[2].set_xlabel("iteration")
        axes[2].set_ylabel(f"validation waste kJ/day ({days} days)")
        axes[2].legend()
    fig.suptitle(f"or-ppo learning curve, {title} (training days)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
