"""Figures 6 and 7 of paper 004: overhead versus energy relative to random, and r2 per month."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

R2_FLOOR = -3.2
"""Figure 7 of the paper is clipped here too."""


def plot_overhead_energy(rows: list[dict[str, Any]], path: Path) -> Path:
    """Figure 6: each idle ensemble as % of random's overhead (x) and energy (y)."""
    fig, ax = plt.subplots(figsize=(6, 5))
    for row in rows:
        if not row["policy"].startswith("idle-") or row["energy_pct_random"] is None:
            continue
        x, y = row["overhead_pct_random"], row["energy_pct_random"]
        ax.scatter(x, y, color="tab:blue")
        ax.annotate(f"{row['policy'][5:]} (s{row['seed']})", (x, y), fontsize=8)
    ax.axvline(100, linestyle=":", color="grey")
    ax.axhline(100, linestyle=":", color="grey")
    ax.set_xlabel("overhead, % of random")
    ax.set_ylabel("HTC energy, % of random")
    ax.set_title("Overhead vs energy (paper 004, figure 6)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_r2_by_month(accuracy: list[dict[str, Any]], path: Path) -> Path:
    """Figure 7: r2 of every model group per month, RF and MLP side by side."""
    by_month: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"rf": [], "mlp": []})
    for row in accuracy:
        month = datetime.fromtimestamp(row["month_start"], UTC).strftime("%Y-%m")
        for model in ("rf", "mlp"):
            value = row[f"r2_{model}"]
            if value == value:  # not NaN
                by_month[month][model].append(max(value, R2_FLOOR))
    months = sorted(by_month)
    fig, ax = plt.subplots(figsize=(max(6, len(months) * 1.1), 4.5))
    for offset, model, color in ((-0.2, "rf", "tab:green"), (0.2, "mlp", "tab:orange")):
        data = [by_month[m][model] or [float("nan")] for m in months]
        positions = [i + offset for i in range(len(months))]
        box = ax.boxplot(data, positions=positions, widths=0.35, patch_artist=True)
        for patch in box["boxes"]:
            patch.set_facecolor(color)
        ax.plot([], [], color=color, label=model.upper())
    ax.set_xticks(range(len(months)), months, rotation=45)
    ax.axhline(0, linestyle=":", color="grey")
    ax.set_ylim(R2_FLOOR, 1.05)
    ax.set_ylabel("r2 per model group (clipped at -3.2)")
    ax.set_title("Prediction accuracy by month (paper 004, figure 7)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
