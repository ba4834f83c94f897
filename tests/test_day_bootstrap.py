"""The interval of a policy's mean overhead against random's, days resampled in pairs."""

from __future__ import annotations

import math

import numpy as np

from advisor.lab.experiments.day_bootstrap import overhead_by_day, ratio_interval
from simulator.trace_model import DAY


def test_jobs_are_summed_by_their_day_of_submission() -> None:
    submit = np.array([0.0, 10.0, DAY + 5, 3 * DAY]) + 1000.0
    minutes, counts = overhead_by_day(submit, np.array([60.0, 120.0, 600.0, 0.0]), 1000.0)
    assert minutes == [3.0, 10.0, 0.0, 0.0] and counts == [2, 1, 0, 1]


def test_paired_days_move_together_so_a_steady_ratio_is_certain() -> None:
    # days differ wildly, but the policy makes every day's jobs wait twice as long as random
    # does: resampling days in pairs gives 2 in every resample, however the days are drawn
    rng = np.random.default_rng(1)
    counts = rng.integers(1, 50, size=60).tolist()
    randoms = (rng.exponential(100.0, size=60) * counts).tolist()
    low, high = ratio_interval(([2 * m for m in randoms], counts), (randoms, counts))
    assert math.isclose(low, 2.0) and math.isclose(high, 2.0)


def test_a_few_noisy_days_give_a_wide_interval_and_one_day_none() -> None:
    randoms = ([100.0, 10.0, 300.0, 5.0], [1, 1, 1, 1])
    mine = ([10.0, 200.0, 30.0, 50.0], [1, 1, 1, 1])
    low, high = ratio_interval(mine, randoms)
    point = sum(mine[0]) / sum(randoms[0])
    assert low < point < high and high / low > 3
    assert all(math.isnan(x) for x in ratio_interval(([5.0], [1]), ([1.0], [1])))


def test_a_day_only_one_replay_completed_jobs_on_still_counts() -> None:
    # random completed nothing submitted on day 1 (say, still running at the end): the day stays
    # in the draw, weighing on the policy's side only
    mine, randoms = ([10.0, 10.0, 10.0], [1, 1, 1]), ([10.0, 0.0, 10.0], [1, 0, 1])
    low, high = ratio_interval(mine, randoms)
    assert low <= 1.0 <= high
