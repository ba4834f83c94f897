"""How far a policy's figures against random's could move by chance: a bootstrap over the days
the jobs were submitted, the same draw for every replay of a member.

The replays of a member run the same jobs, so their days pair up: a day whose batches met a busy
pool is busy in each. Resampling days rather than jobs keeps that pairing and the bursts (the
jobs of one day share their fate, as the live control group's report assumes too:
advisor/daemon/effect.py). On a pool's own short history, a handful of jobs on a few days, the
intervals are wide, and say that the figures are no verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simulator.trace_model import DAY

RESAMPLES = 2000
LEVEL = 0.95
Series = Sequence[float]
"""A sum per day of submission (0: the replay's first day)."""
NO_INTERVAL = (float("nan"), float("nan"))
MIN_DAYS = 20
"""Fewer days than this give no interval: a percentile bootstrap over a few units understates
the noise (over 3 days it cannot reach beyond the days' own ratios)."""


def by_day(submit: np.ndarray, values: np.ndarray, start: float) -> list[float]:
    """``values`` of the jobs submitted at ``submit``, summed per day from ``start``."""
    day = np.maximum((submit - start) // DAY, 0).astype(int)
    return np.bincount(day, weights=values).tolist() if day.size else []


def _resampled(series: Sequence[Series], seed: int) -> np.ndarray | None:
    """Per resample, each series summed over the days drawn (the days where any is not 0, drawn
    with replacement; the same draw for all); None with fewer than ``MIN_DAYS`` such days."""
    sums = np.zeros((len(series), max(len(s) for s in series)))
    for row, values in enumerate(series):
        sums[row, : len(values)] = values
    sums = sums[:, (sums != 0).any(axis=0)]
    days = sums.shape[1]
    if days < MIN_DAYS:
        return None
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(days, np.full(days, 1.0 / days), size=RESAMPLES).astype(float)
    return weights @ sums.T


def _interval(values: np.ndarray) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if not values.size:
        return NO_INTERVAL
    tail = (1.0 - LEVEL) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def ratio_interval(
    mine: tuple[Series, Series], randoms: tuple[Series, Series], seed: int = 0
) -> tuple[float, float]:
    """The ``LEVEL`` interval of mine's mean overhead over random's, from each one's summed
    overheads and completed jobs per day."""
    totals = _resampled([*mine, *randoms], seed)
    if totals is None:
        return NO_INTERVAL
    with np.errstate(invalid="ignore", divide="ignore"):
        return _interval((totals[:, 0] / totals[:, 1]) / (totals[:, 2] / totals[:, 3]))


def share_interval(
    mine: Series, randoms: Series, crystals: Series, seed: int = 0
) -> tuple[float, float]:
    """The ``LEVEL`` interval of the share of the achievable saving, (random - mine) / (random -
    crystal), from each one's energy per day."""
    totals = _resampled([mine, randoms, crystals], seed)
    if totals is None:
        return NO_INTERVAL
    achievable = totals[:, 1] - totals[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        return _interval(
            np.where(achievable > 0, (totals[:, 1] - totals[:, 0]) / achievable, np.nan)
        )
