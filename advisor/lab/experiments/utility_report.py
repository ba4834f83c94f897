"""Shared output of the paper 002 experiments: the statistics CSV and the figures."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simulator.grid_queue.trial import TrialResult
from simulator.plotting import figure, legend_outside, panels, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes

STAT_COLUMNS = ("mean", "std", "max", "median", "work_mean", "jobs")


def write_stats(results: Sequence[TrialResult], path: Path) -> Path:
    """Tables II/III: one row per workload, policy and class, plus fair-share at 13 h and end."""
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["workload", "policy", "class", *STAT_COLUMNS, "fair_13h", "fair_end"])
        for r in results:
            for cls, stats in r.stats.items():
                row = [f"{stats[c]:.1f}" for c in STAT_COLUMNS]
                out.writerow(
                    [r.workload, r.policy, cls, *row, f"{r.fair_13h:.4f}", f"{r.fair_end:.4f}"]
                )
    return path


def print_table(results: Sequence[TrialResult]) -> None:
    print(f"{'workload':26} {'policy':14} {'class':11} {'mean':>8} {'std':>8} {'max':>8} "
          f"{'median':>8} {'workmean':>8} {'F@13h':>7} {'F@end':>7}")  # fmt: skip
    for r in results:
        for cls, s in r.stats.items():
            print(
                f"{r.workload:26} {r.policy:14} {cls:11} {s['mean']:8.0f} {s['std']:8.0f} "
                f"{s['max']:8.0f} {s['median']:8.0f} {s['work_mean']:8.0f} {r.fair_13h:7.4f} "
                f"{r.fair_end:7.4f}"
            )


def _cdf(ax: Axes, values: np.ndarray, label: str) -> None:
    xs = np.sort(values)
    ax.plot(xs, np.arange(1, len(xs) + 1) / max(len(xs), 1), label=label)


def plot_cdfs(results: Sequence[TrialResult], path: Path, title: str) -> Path:
    """Figures 3 and 6: CDFs of the waiting time and the relative overhead, interactive jobs."""
    fig, (left, right) = panels(1, 2, width=11, height=4, sharey=True)
    for r in results:
        mask = r.interactive & r.counted
        _cdf(left, r.wait[mask], r.policy)
        _cdf(right, r.wait[mask] / np.maximum(r.runtime[mask], 1.0), r.policy)
    left.set_xscale("symlog", linthresh=60)
    right.set_xscale("symlog", linthresh=1)
    left.set_xlabel("waiting time (s; linear below 60)")
    right.set_xlabel("relative overhead (wait / execution time; linear below 1)")
    left.set_ylabel("fraction of interactive jobs")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    legend_outside([left, right])
    fig.suptitle(title)
    return save(fig, path)


def plot_fairness(results: Sequence[TrialResult], path: Path, title: str) -> Path:
    """Figures 4, 5 and 7: the fair-share utility (eq. 4) over simulated time; policies drawn
    thinner and dashed in turn, so one that lies on another still shows."""
    fig, ax = figure(8, 4)
    for i, r in enumerate(results):
        style = ("-", "--", ":", "-.")[i % 4]
        ax.plot(r.fair_times / 3600.0, r.fairness, style, lw=2.5 - 0.5 * (i % 4), label=r.policy)
    if max(r.fair_times[-1] for r in results) >= 13 * 3600.0:  # a short run needs no mark
        ax.axvline(13, color="grey", lw=0.8, ls=":", label="13 h (F@13h in the table)")
    ax.set_xlabel("simulated hours")
    ax.set_ylabel("fair-share utility F")
    ax.set_title(title)
    legend_outside(ax)
    return save(fig, path)


def plot_wait_difference(base: TrialResult, other: TrialResult, path: Path) -> Path:
    """Figure 6 right: base's waiting time minus the other's, by arrival date."""
    fig, ax = figure(8, 4)
    ax.plot(base.submit / 3600.0, base.wait - other.wait, ".", ms=2)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("arrival (simulated hours)")
    ax.set_ylabel(f"wait {base.policy} - wait {other.policy} (s)")
    ax.set_title(f"above 0: {other.policy} waits less")
    return save(fig, path)
