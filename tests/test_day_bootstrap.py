"""The intervals of a policy's figures against random's, days of submission resampled in pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from advisor.lab.experiments.day_bootstrap import by_day, ratio_interval, share_interval
from advisor.lab.experiments.sweep_runs import Task, run_task
from simulator.trace_model import DAY


def test_jobs_are_summed_by_their_day_of_submission() -> None:
    submit = np.array([0.0, 10.0, DAY + 5, 3 * DAY]) + 1000.0
    assert by_day(submit, np.array([1.0, 2.0, 10.0, 0.5]), 1000.0) == [3.0, 10.0, 0.0, 0.5]


def test_a_replays_days_add_up_to_its_figures() -> None:
    row = run_task(Task("frugal", scale=0.03, days=21, seed=1, shape="campus"))
    minutes, completed = row["overhead_days"]
    assert sum(completed) == row["jobs_completed"] > 0
    assert sum(minutes) / sum(completed) == pytest.approx(row["overhead_min"])
    assert sum(row["energy_days"]) / 1e6 == pytest.approx(row["total_mwh"])


def test_paired_days_move_together_so_a_steady_effect_is_certain() -> None:
    # days differ wildly, but every day the policy's jobs wait twice as long as random's and it
    # saves 0.7 of what crystal saves: drawn in pairs, every resample gives exactly that
    rng = np.random.default_rng(1)
    counts = rng.integers(1, 50, size=60).astype(float)
    waits = rng.exponential(100.0, size=60) * counts
    low, high = ratio_interval((list(2 * waits), list(counts)), (list(waits), list(counts)))
    assert math.isclose(low, 2.0) and math.isclose(high, 2.0)
    randoms = rng.exponential(50.0, size=60)
    crystals = randoms * rng.uniform(0.2, 0.6, size=60)
    mine = randoms - 0.7 * (randoms - crystals)
    low, high = share_interval(list(mine), list(randoms), list(crystals))
    assert math.isclose(low, 0.7) and math.isclose(high, 0.7)


def test_noisy_days_give_a_wide_interval_and_too_few_days_none() -> None:
    randoms = ([100.0, 10.0, 300.0, 5.0] * 5, [1.0] * 20)
    mine = ([10.0, 200.0, 30.0, 50.0] * 5, [1.0] * 20)
    low, high = ratio_interval(mine, randoms)
    point = sum(mine[0]) / sum(randoms[0])
    assert low < point < high and high / low > 2
    # 19 days: a bootstrap over so few cannot say how far the figure moves by chance
    few = (randoms[0][:19], randoms[1][:19])
    assert all(math.isnan(x) for x in ratio_interval((mine[0][:19], mine[1][:19]), few))
    assert all(math.isnan(x) for x in share_interval([5.0] * 19, [9.0] * 19, [1.0] * 19))


def test_a_day_only_one_replay_completed_jobs_on_still_counts() -> None:
    # random completed nothing submitted on day 1 (say, still running at the end): the day stays
    # in the draw, weighing on the policy's side only
    mine = ([10.0] * 30, [1.0] * 30)
    randoms = ([10.0, 0.0] * 15, [1.0, 0.0] * 15)
    low, high = ratio_interval(mine, randoms)
    assert low <= 1.0 <= high
