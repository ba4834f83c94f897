"""Figures 6 and 7 of paper 004: overhead versus energy relative to random, and r2 per month."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from simulator.plotting import figure, label_inside, legend_outside, save

R2_FLOOR = -3.2
"""Figure 7 of the paper is clipped here too."""


def plot_overhead_energy(rows: list[dict[str, Any]], path: Path) -> Path:
    """Figure 6: each idle ensemble as % of random's overhead (x) and energy (y); ensembles that
    land on the same point share one label."""
    points: dict[tuple[float, float], list[str]] = defaultdict(list)
    for row in rows:
        if row["policy"].startswith("idle-") and row["energy_pct_random"] is not None:
            where = (row["overhead_pct_random"], row["energy_pct_random"])
            points[where].append(f"{row['policy'][5:]} (s{row['seed']})")
    fig, ax = figure(6, 5)
    ax.scatter([x for x, _ in points], [y for _, y in points], color="tab:blue")
    ax.axvline(100, linestyle=":", color="grey")
    ax.axhline(100, linestyle=":", color="grey")
    ax.set_xlabel("overhead, % of random")
    ax.set_ylabel("HTC energy, % of random")
    ax.set_title("Overhead vs energy (paper 004, figure 6)")
    for (x, y), names in points.items():
        label_inside(ax, x, y, ", ".join(names))
    return save(fig, path)


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
    fig, ax = figure(max(6, len(months) * 1.1), 4.5)
    for offset, model, color in ((-0.2, "rf", "tab:green"), (0.2, "mlp", "tab:orange")):
        data = [by_month[m][model] or [float("nan")] for m in months]
        positions = [i + offset for i in range(len(months))]
        box = ax.boxplot(
            data, positions=positions, widths=0.35, patch_artist=True, medianprops={"color": "k"}
        )
        for patch in box["boxes"]:
            patch.set_facecolor(color)
        ax.plot([], [], color=color, lw=6, label=model.upper())
    ax.set_xticks(range(len(months)), months, rotation=45)
    ax.axhline(0, linestyle=":", color="grey")
    ax.set_ylim(R2_FLOOR, 1.05)
    ax.set_ylabel(f"r2 per model group (clipped at {R2_FLOOR})")
    ax.set_title("Prediction accuracy by month (paper 004, figure 7)")
    legend_outside(ax)
    return save(fig, path)
