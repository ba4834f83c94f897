"""The learning curve of ``train-power``: training-day return and waste per PPO iteration, and
the greedy agent's waste on the validation days (which picks the shipped agent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from simulator.plotting import legend_outside, panels, save


def plot_curve(
    curve: list[dict[str, float]], png: Path, title: str, validation: dict[str, Any] | None = None
) -> None:
    """Episode return and daily waste per iteration with a 10-iteration moving average; with
    ``validation``, a third panel: validation waste per day against T(0)'s, the kept one starred."""
    if not curve:
        return
    it = [c["iteration"] for c in curve]
    history = [h for h in (validation or {}).get("history", []) if h["label"].startswith("iter")]
    fig, axes = panels(1, 3 if history else 2, width=16 if history else 11, height=3.5)
    for ax, key, label in zip(
        axes, ("return", "waste_kj"), ("episode return", "waste kJ/day"), strict=False
    ):
        y = np.array([c[key] for c in curve])
        ax.plot(it, y, color="tab:blue", alpha=0.3, label="per iteration")
        k = min(10, len(y))
        mean = np.convolve(y, np.ones(k) / k, mode="valid")
        dots = "." if len(mean) < 3 else None  # a mean of one or two points is no line
        ax.plot(it[k - 1 :], mean, color="tab:blue", marker=dots, label=f"{k}-iteration mean")
        ax.set_xlabel("iteration")
        ax.set_ylabel(label)
    if history and validation is not None:
        days = len(validation["days"])
        x = [int(h["label"].split()[-1]) for h in history]
        waste = [h["waste_kj"] / days for h in history]
        axes[2].plot(x, waste, color="tab:purple", marker="o", label="or-ppo, validation days")
        axes[2].axhline(validation["t0"]["waste_kj"] / days, color="grey", ls="--", label="T(0)")
        best = validation["best"]
        if best["label"].startswith("iter"):
            at = int(best["label"].split()[-1])
            axes[2].plot(at, best["waste_kj"] / days, "r*", ms=14, label="kept (shipped)")
        axes[2].set_xlabel("iteration")
        axes[2].set_ylabel(f"validation waste kJ/day ({days} days)")
    legend_outside(axes)
    fig.suptitle(f"or-ppo learning curve, {title} (training days)")
    save(fig, png)
