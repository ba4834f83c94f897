"""Days as episodes (paper 001, section 5.2): bins, the 80/20 split, and no leak into training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from dedicatedkit import workload

from advisor.cli import main
from advisor.lab.power_checkpoints import checkpoint_path, load_checkpoint
from simulator.dedicated.days import Day, group_of, sequential_share, split_days, train_test_split
from simulator.dedicated.environment import PowerEnv


def synthetic_days(n_days: int, seed: int = 0) -> list[Day]:
    rng = np.random.default_rng(seed)
    jobs = []
    for d in range(n_days):
        n = int(rng.integers(0, 12))
        share = rng.random()
        gaps = rng.choice([60.0, 3600.0], n, p=[share, 1 - share])
        t = d * 86400.0 + np.cumsum(gaps) % 86000.0
        jobs += [(float(a), 1, 600.0, 60.0) for a in np.sort(t)]
    return split_days(workload(4, 1, jobs))


def test_sequential_share_and_groups() -> None:
    assert sequential_share(np.array([0.0, 60.0, 120.0, 4000.0])) == pytest.approx(2 / 4)
    assert [group_of(s) for s in (0.0, 0.24, 0.25, 0.5, 0.99, 1.0)] == [1, 1, 2, 3, 4, 5]


def test_days_with_fewer_than_two_jobs_are_dropped() -> None:
    days = split_days(workload(2, 1, [(10, 1, 60, 6), (90000, 1, 60, 6), (90100, 1, 60, 6)]))
    assert [d.index for d in days] == [1]
    assert days[0].jobs.arrival.tolist() == [90000 - 86400, 90100 - 86400]


@pytest.mark.parametrize("seed", range(3))
def test_the_split_is_disjoint_complete_and_stratified(seed: int) -> None:
    days = synthetic_days(60, seed)
    train, test = train_test_split(days, seed=seed)
    train_ids, test_ids = {d.index for d in train}, {d.index for d in test}
    assert not train_ids & test_ids
    assert train_ids | test_ids == {d.index for d in days}
    for group in {d.group for d in days}:
        n = sum(d.group == group for d in days)
        assert sum(d.group == group for d in test) == round(0.2 * n)
    assert train_test_split(days, seed=seed) == (train, test)  # same seed, same split


def test_the_environment_plays_only_the_days_it_was_given() -> None:
    days = synthetic_days(20)
    train, _test = train_test_split(days)
    env = PowerEnv(train)
    seen = {env.reset(seed=s)[1]["day"] for s in range(30)}
    assert seen <= {d.index for d in train}
    obs, _ = env.reset(seed=0)
    assert obs.shape == (env.observation_size,)
    total, done = 0.0, False
    while not done:
        obs, reward, done, _, info = env.step(0)
        total += reward
    assert total <= 0.0 and "metrics" in info


@pytest.mark.realdata
def test_training_never_sees_a_test_day_and_resumes(shared_data: Path, tmp_path: Path) -> None:
    from simulator.dedicated.catalog import catalogued, load_days

    args = ["train-power", "hpc2n", "--data-dir", str(shared_data), "--out", str(tmp_path)]
    args += ["--actors", "1", "--workers", "1", "--hidden", "8"]
    assert main([*args, "--iterations", "1"]) == 0
    assert main([*args, "--iterations", "2"]) == 0
    _, _, meta = load_checkpoint(checkpoint_path(str(tmp_path), "hpc2n"))
    assert meta["iteration"] == 2
    train, test = load_days(catalogued("hpc2n", str(shared_data)))
    played = {d for entry in meta["curve"] for d in entry["days"]}
    assert played and played <= {d.index for d in train}
    assert not played & {d.index for d in test}
