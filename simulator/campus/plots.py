"""Pictures of a generated (or read) trace, so a person can check its shape at a glance.

Owner sessions per day should show terms, vacations and weekends; jobs per day should show bursts
without a pattern. matplotlib is imported only when drawing (through ``simulator.plotting``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from simulator.plotting import label_inside, legend_outside, panels, save
from simulator.trace_model import DAY, Trace

if TYPE_CHECKING:
    from matplotlib.axes import Axes

WIDTH = 12.0


def _num(t: float) -> float:
    """A UTC epoch time as a matplotlib date number."""
    import matplotlib.dates as mdates

    return float(mdates.date2num(dt.datetime.fromtimestamp(t, dt.UTC)))


def _per_day(times: np.ndarray, trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    ndays = max(int(np.ceil((trace.end - trace.start) / DAY)), 1)
    idx = ((times - trace.start) // DAY).astype(np.int64)
    counts = np.bincount(idx[(idx >= 0) & (idx < ndays)], minlength=ndays)
    return _num(trace.start) + np.arange(ndays), counts


def _shade_terms(ax: Axes, trace: Trace) -> None:
    for i, (a, b) in enumerate(trace.terms):
        ax.axvspan(
            _num(max(a, trace.start)),
            _num(min(b, trace.end)),
            color="tab:green",
            alpha=0.12,
            lw=0,
            label="teaching term" if i == 0 else None,
        )


def _dates(ax: Axes) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def plot_scenario(trace: Trace, out_dir: str | Path) -> list[Path]:
    """Draw owner sessions per day and jobs per day as PNGs in ``out_dir``; return their paths."""
    out = Path(out_dir)
    n_pc = len(trace.inventory.machines)

    days, sessions = _per_day(trace.owners.login, trace)
    weekend = (np.floor(days).astype(np.int64) + 3) % 7 >= 5  # date number 0 is a Thursday
    fig, (ax,) = panels(width=WIDTH, height=4.5)
    _shade_terms(ax, trace)
    for mask, color, label in (
        (~weekend, "tab:blue", "weekday"),
        (weekend, "tab:orange", "weekend"),
    ):
        ax.bar(days, np.where(mask, sessions, 0), width=1.0, align="edge", color=color, label=label)
    ax.set_title(f"Owner sessions per day: {len(trace.owners):,} logins on {n_pc:,} machines")
    ax.set_xlabel("day (UTC)")
    ax.set_ylabel("owner logins per day")
    _dates(ax)
    legend_outside(ax)
    paths = [save(fig, out / "owner_sessions_per_day.png")]

    days, jobs = _per_day(trace.jobs.submit, trace)
    never = trace.jobs.never_finishes()
    _, broken = _per_day(trace.jobs.submit[never], trace)
    fig, (ax, ax2) = panels(2, 1, WIDTH, 6.0, sharex=True, height_ratios=(2, 1))
    top = max(float(jobs.max(initial=1)), 1.0) * 2.0  # one log range for both: shares compare
    for a, counts, color, label in (
        (ax, jobs, "tab:purple", "submitted"),
        (ax2, broken, "tab:red", "never finish\n(removed by user)"),
    ):
        _shade_terms(a, trace)
        a.bar(days, counts, width=1.0, align="edge", color=color, label=label)
        a.set_yscale("log")
        a.set_ylim(0.8, top)
        _dates(a)
        legend_outside(a)
    ax.set_title(f"HTC job submissions per day: {len(trace.jobs):,} jobs (log scale)")
    ax.set_ylabel("jobs submitted per day")
    if jobs.max(initial=0) > 0:
        peak = int(np.argmax(jobs))
        when = dt.datetime.fromtimestamp(trace.start + peak * DAY, dt.UTC)
        label_inside(ax, days[peak] + 0.5, jobs[peak], f"peak {jobs[peak]:,} on {when:%a %d %b %Y}")
    share = never.mean() if len(never) else 0.0
    ax2.set_title(f"of which never finish: {int(never.sum()):,} ({share:.1%})", fontsize=10)
    ax2.set_ylabel("jobs per day")
    ax2.set_xlabel("day (UTC)")
    paths.append(save(fig, out / "jobs_per_day.png"))
    return paths
