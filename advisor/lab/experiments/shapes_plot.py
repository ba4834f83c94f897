"""The plot of ``experiment shapes``: each member's overhead against its saving share, with
their intervals, around the target box."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from advisor.lab.experiments.sweep_runs import save_plot
from simulator.plotting import figure, legend_outside


def spread(rows: list[dict[str, Any]], figure: str) -> np.ndarray:
    """Error bars from each row's interval of ``figure`` (none where it has none)."""
    point = np.array([r[figure] for r in rows])
    low, high = (np.array([r[f"{figure}_{end}"] for r in rows]) for end in ("low", "high"))
    return np.nan_to_num(np.stack([point - low, high - point]))


def plot(
    table: list[dict[str, Any]], path: Path, overhead_limit: float, share_target: float
) -> None:
    """Overhead against saving share, a point per member and policy: the target is the box
    left of ``overhead_limit`` times random's overhead and above ``share_target`` of the
    achievable saving."""
    fig, ax = figure(8, 5)
    markers = {
        s: m for s, m in zip(sorted({r["shape"] for r in table}), "osD^v<>ph*", strict=False)
    }
    for i, policy in enumerate(sorted({r["policy"] for r in table} - {"crystal"})):
        for shape, marker in markers.items():
            mine = [r for r in table if r["policy"] == policy and r["shape"] == shape]
            x = [r["overhead_vs_random"] for r in mine]
            y = [r["saving_share"] for r in mine]
            ax.scatter(x, y, color=f"C{i}", marker=marker, label=f"{policy}, {shape}")
            ax.errorbar(
                x, y, xerr=spread(mine, "overhead_vs_random"), yerr=spread(mine, "saving_share"),
                fmt="none", ecolor=f"C{i}", alpha=0.4,
            )  # fmt: skip
    ax.axvline(overhead_limit, color="grey", linestyle="--", linewidth=1)
    ax.axhline(share_target, color="grey", linestyle="--", linewidth=1)
    ax.set(
        xlabel="mean overhead / random's",
        ylabel="share of the achievable saving\n(random - policy) / (random - crystal)",
    )
    ax.set_title(
        "Policies on differently shaped pools: the target is the upper-left box\n"
        "(bars: 95% intervals, days of submission resampled)"
    )
    legend_outside(ax)
    save_plot(fig, path)
