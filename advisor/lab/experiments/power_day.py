"""One test day's node states under each power policy of the table, minute by minute.

Where Table 3 says how much each policy wasted, this plot shows how: one panel per policy with
the nodes computing, idle, switching and off stacked, and the reservation drawn over them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from plugins.power.view import COMPUTING, IDLE, OFF, SWITCHING_OFF, SWITCHING_ON
from simulator.dedicated.catalog import ClusterLog, load_days
from simulator.dedicated.days import Day
from simulator.dedicated.episode import DayEpisode, EpisodeOracle
from simulator.plotting import legend_outside, panels, save

BANDS = (
    ("computing", (COMPUTING,), "C2"),
    ("idle", (IDLE,), "C1"),
    ("switching", (SWITCHING_ON, SWITCHING_OFF), "C3"),
    ("off", (OFF,), "0.8"),
)


def chosen_day(log: ClusterLog, index: int | None) -> Day:
    """The test day numbered ``index`` (as in days.csv), else the one with the median number
    of jobs (a typical day, not the emptiest or the busiest)."""
    _, test = load_days(log)
    if index is not None:
        found = [d for d in test if d.index == index]
        if not found:
            raise FileNotFoundError(f"--day {index} is no test day of {log.name} (see days.csv)")
        return found[0]
    return sorted(test, key=lambda d: len(d.jobs))[len(test) // 2]


def node_states(day: Day, policy: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per minute: nodes in each band of ``BANDS`` (rows) and the reservation's size."""
    episode = DayEpisode(day.jobs)
    if policy.NEEDS_ORACLE:
        policy.bind_oracle(EpisodeOracle(episode))
    counts, reserved = [], []
    while not episode.done:
        view = episode.view()
        per_state = np.bincount(view.node_state, minlength=5)
        counts.append([per_state[list(states)].sum() for _, states, _ in BANDS])
        reserved.append(int(view.reserved.sum()))
        episode.step(policy.advise(view, view.now))
    return np.array(counts).T, np.array(reserved)


def plot_day(log: ClusterLog, index: int | None, policies: dict[str, Any], png: Path) -> None:
    """``policies`` by label, each playing the chosen test day; one stacked panel each."""
    day = chosen_day(log, index)
    fig, axes = panels(len(policies), 1, width=9, height=1.6 * len(policies) + 0.8, sharex=True)
    for ax, (label, policy) in zip(axes, policies.items(), strict=True):
        counts, reserved = node_states(day, policy)
        hours = np.arange(counts.shape[1]) / 60.0
        colors = [color for _, _, color in BANDS]
        ax.stackplot(hours, counts, labels=[name for name, _, _ in BANDS], colors=colors)
        ax.plot(hours, reserved, color="k", linewidth=1, label="reserved (held off)")
        ax.set_ylim(0, log.nodes)
        ax.set_ylabel(f"{label}\nnodes")
    axes[0].set_title(f"{log.name}: test day {day.index} ({len(day.jobs)} jobs), node states")
    axes[-1].set_xlabel("hour of the day")
    axes[-1].set_xlim(0, 24)
    legend_outside(axes)
    save(fig, png)
