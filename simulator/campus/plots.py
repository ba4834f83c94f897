"""Pictures of a generated (or read) trace, so a person can check its shape at a glance.

Owner sessions per day should show terms, vacations and weekends; jobs per day should show bursts
without a pattern. Uses matplotlib's Agg backend: no display is needed.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np

from simulator.trace_model import DAY, Trace


def _num(t: float) -> float:
    """A UTC epoch time as a matplotlib date number."""
    return float(mdates.date2num(dt.datetime.fromtimestamp(t, dt.UTC)))


def _per_day(times: np.ndarray, trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    ndays = max(int(np.ceil((trace.end - trace.start) / DAY)), 1)
    idx = ((times - trace.start) // DAY).astype(np.int64)
    counts = np.bincount(idx[(idx >= 0) & (idx < ndays)], minlength=ndays)
    return _num(trace.start) + np.arange(ndays), counts


def _shade_terms(ax: plt.Axes, trace: Trace) -> None:
    for i, (a, b) in enumerate(trace.terms):
        ax.axvspan(
            _num(max(a, trace.start)),
            _num(min(b, trace.end)),
            color="tab:green",
            alpha=0.12,
            lw=0,
            label="teaching term" if i == 0 else None,
        )


def _finish(fig: plt.Figure, ax: plt.Axes, path: Path) -> Path:
    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_scenario(trace: Trace, out_dir: str | Path) -> list[Path]:
    """Draw owner sessions per day and jobs per day as PNGs in ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    n_pc = len(trace.inventory.machines)

    days, sessions = _per_day(trace.owners.login, trace)
    weekend = (np.floor(days).astype(np.int64) + 3) % 7 >= 5  # date number 0 is a Thursday
    fig, ax = plt.subplots(figsize=(12, 4.5))
    _shade_terms(ax, trace)
    ax.bar(
        days,
        np.where(weekend, 0, sessions),
        width=1.0,
        align="edge",
        color="tab:blue",
        label="weekday",
    )
    ax.bar(
        days,
        np.where(weekend, sessions, 0),
        width=1.0,
        align="edge",
        color="tab:orange",
        label="weekend",
    )
    ax.set_title(f"Owner sessions per day: {len(trace.owners):,} logins on {n_pc:,} machines")
    ax.set_xlabel("day (UTC)")
    ax.set_ylabel("owner logins per day")
    paths = [_finish(fig, ax, out / "owner_sessions_per_day.png")]

    days, jobs = _per_day(trace.jobs.submit, trace)
    never = trace.jobs.never_finishes()
    _, broken = _per_day(trace.jobs.submit[never], trace)
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(12, 6), sharex=True, height_ratios=(2, 1))
    for a in (ax, ax2):
        _shade_terms(a, trace)
        a.set_yscale("log")
        a.grid(axis="y", alpha=0.3)
    ax.bar(days, jobs, width=1.0, align="edge", color="tab:purple", label="submitted")
    if len(jobs) and jobs.max() > 0:
        peak = int(np.argmax(jobs))
        ax.annotate(
            f"{jobs[peak]:,} on {mdates.num2date(days[peak]):%a %d %b %Y}",
            (days[peak], jobs[peak]),
            xytext=(8, -10),
            textcoords="offset points",
            fontsize=9,
        )
    ax.set_title(f"HTC job submissions per day: {len(trace.jobs):,} jobs (log scale)")
    ax.set_ylabel("jobs submitted per day")
    ax.legend(loc="upper right", fontsize=8)
    ax2.bar(
        days,
        broken,
        width=1.0,
        align="edge",
        color="tab:red",
        label="never finish (removed by user)",
    )
    share = never.mean() if len(never) else 0.0
    ax2.set_title(f"of which never finish: {int(never.sum()):,} ({share:.1%})", fontsize=10)
    ax2.set_ylabel("jobs per day")
    ax2.set_xlabel("day (UTC)")
    for a in (ax, ax2):
        a.set_ylim(0.8, max(float(jobs.max(initial=1)), 1.0) * 2.0)
    paths.append(_finish(fig, ax2, out / "jobs_per_day.png"))
    return paths
