"""EASY backfilling with SAF (eq. 11) and FCFS: backfilled jobs never delay the first job."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dedicatedkit import random_workload, workload

from plugins.contract.policy import PolicyContext
from plugins.power.timeout import TimeoutPolicy
from simulator.dedicated.episode import DayEpisode


@pytest.mark.parametrize("order", ["saf", "fcfs"])
@pytest.mark.parametrize("seed", range(6))
def test_backfilling_never_moves_the_first_jobs_shadow_time_later(order: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    audit: list[tuple[int, float, float]] = []
    episode = DayEpisode(random_workload(rng, 4, 2, 40), order=order, audit=audit)
    episode.run(TimeoutPolicy(PolicyContext({}), {"t": float(seed)}))
    assert len(audit) > 10
    for _, before, after in audit:
        assert after <= before


@pytest.mark.parametrize("seed", range(4))
def test_fcfs_first_job_starts_by_its_first_promise_when_walltimes_are_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    jobs = random_workload(rng, 4, 2, 30)
    exact = workload(
        4, 2, list(zip(jobs.arrival, jobs.cores, jobs.walltime, jobs.walltime, strict=False))
    )
    audit: list[tuple[int, float, float]] = []
    episode = DayEpisode(exact, order="fcfs", audit=audit)
    episode.run(TimeoutPolicy(PolicyContext({}), {"t": 1e9}))
    first_promise: dict[int, float] = {}
    for head, shadow, _ in audit:
        if math.isfinite(shadow):
            first_promise.setdefault(head, shadow)
    assert first_promise
    for job, promise in first_promise.items():
        assert episode.cluster.record.start[job] <= promise + 1e-6


def test_saf_starts_the_smallest_area_first_when_both_wait() -> None:
    # one node: the long job blocks it; then a big-area and a small-area job wait
    jobs = workload(1, 1, [(0, 1, 600, 600), (10, 1, 3600, 60), (20, 1, 300, 60)])
    episode = DayEpisode(jobs, order="saf")
    episode.run(TimeoutPolicy(PolicyContext({}), {"t": 60.0}))
    start = episode.cluster.record.start
    assert start[2] < start[1]
    fcfs = DayEpisode(jobs, order="fcfs")
    fcfs.run(TimeoutPolicy(PolicyContext({}), {"t": 60.0}))
    assert fcfs.cluster.record.start[1] < fcfs.cluster.record.start[2]


def test_a_job_reaching_its_walltime_is_killed() -> None:
    from simulator.dedicated.workload import guessed_walltime

    assert guessed_walltime(np.array([10.0, 300.0, 301.0]))[2] == 900.0
    from simulator.dedicated.power import CoreUse

    jobs = workload(1, 1, [(0, 1, 600, 900)])
    episode = DayEpisode(jobs)
    episode.run(TimeoutPolicy(PolicyContext({}), {"t": 0.0}))
    computing_s = episode.cluster.meter.joules[CoreUse.COMPUTING] / 190.0
    assert computing_s == pytest.approx(600.0)
