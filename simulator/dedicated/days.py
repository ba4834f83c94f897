"""Days as episodes (paper 001, section 5.2): bins by share of sequential jobs, 80/20 by day."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.dedicated.workload import Workload

DAY_S = 86400.0
SEQUENTIAL_GAP_S = 300.0
"""A job is sequential when it arrives less than 5 minutes after the previous one (section 2.2)."""
BIN_EDGES = (0.25, 0.50, 0.75, 1.0)
"""Groups #1..#5: [0,25%), [25,50%), [50,75%), [75,100%), exactly 100%."""


@dataclass(frozen=True)
class Day:
    index: int
    group: int
    sequential_share: float
    jobs: Workload


def sequential_share(arrival: np.ndarray) -> float:
    """Share of a day's jobs that arrive under 5 minutes after the previous job."""
    if len(arrival) < 2:
        return 0.0
    return float(np.mean(np.diff(arrival) < SEQUENTIAL_GAP_S) * (len(arrival) - 1) / len(arrival))


def group_of(share: float) -> int:
    """1..5 for the bins of Table 2 (5 holds days where every job is sequential)."""
    if share >= 1.0:
        return 5
    return 1 + int(np.searchsorted(BIN_EDGES, share, side="right"))


def split_days(workload: Workload) -> list[Day]:
    """Every day with at least two arriving jobs, arrivals relative to that day's midnight."""
    day_of = np.floor(workload.arrival / DAY_S).astype(np.int64)
    days = []
    for d in np.unique(day_of):
        index = np.flatnonzero(day_of == d)
        if len(index) < 2:
            continue
        jobs = workload.subset(index, float(d) * DAY_S)
        share = sequential_share(jobs.arrival)
        days.append(Day(int(d), group_of(share), share, jobs))
    return days


def train_test_split(
    days: list[Day], test_share: float = 0.2, seed: int = 0
) -> tuple[list[Day], list[Day]]:
    """Per group, a seeded ``test_share`` of the days is held out; no day is in both halves."""
    rng = np.random.default_rng(seed)
    train: list[Day] = []
    test: list[Day] = []
    for group in sorted({d.group for d in days}):
        members = [d for d in days if d.group == group]
        order = rng.permutation(len(members))
        n_test = round(test_share * len(members))
        test += [members[i] for i in order[:n_test]]
        train += [members[i] for i in order[n_test:]]
    return sorted(train, key=lambda d: d.index), sorted(test, key=lambda d: d.index)
