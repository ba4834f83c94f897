"""How far a policy's mean overhead against random's could move by chance: a bootstrap over
the days the jobs were submitted, the same draw for both replays of a member.

Both replays of a member run the same jobs, so their days pair up: a day whose batches met a
busy pool is busy in both. Resampling days rather than jobs keeps that pairing and the bursts
(the jobs of one day share their fate, as the live control group's report assumes too:
advisor/daemon/effect.py). On a pool's own short history, a handful of jobs on a few days, the
interval is wide, and says that the ratio is no verdict.
"""

from __future__ import annotations

import numpy as np

from simulator.trace_model import DAY

RESAMPLES = 2000
LEVEL = 0.95
Days = tuple[list[float], list[int]]
"""Per day of submission (0: the replay's first), the completed jobs' overhead in minutes,
summed, and their count."""


def overhead_by_day(submit: np.ndarray, overhead_s: np.ndarray, start: float) -> Days:
    """The completed jobs' overheads (``overhead_s``, submitted at ``submit``) per day."""
    day = np.maximum((submit - start) // DAY, 0).astype(int)
    minutes = np.bincount(day, weights=overhead_s / 60.0) if day.size else np.zeros(0)
    return minutes.tolist(), np.bincount(day).tolist()


def ratio_interval(mine: Days, randoms: Days, seed: int = 0) -> tuple[float, float]:
    """The ``LEVEL`` percentile interval of mine's mean overhead over random's, the days on
    which either completed a job resampled with replacement (NaN without two such days)."""
    n = max(len(mine[1]), len(randoms[1]))
    sums = np.zeros((4, n))
    columns: tuple[list[float] | list[int], ...] = (*mine, *randoms)
    for row, values in enumerate(columns):
        sums[row, : len(values)] = values
    sums = sums[:, (sums[1] > 0) | (sums[3] > 0)]
    days = sums.shape[1]
    if days < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(days, np.full(days, 1.0 / days), size=RESAMPLES).astype(float)
    totals = weights @ sums.T  # per resample: mine's minutes and count, random's
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = (totals[:, 0] / totals[:, 1]) / (totals[:, 2] / totals[:, 3])
    ratios = ratios[np.isfinite(ratios)]
    if not ratios.size:
        return float("nan"), float("nan")
    tail = (1.0 - LEVEL) / 2.0
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(low), float(high)
