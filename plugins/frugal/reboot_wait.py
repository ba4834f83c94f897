"""A new job the nightly reboot would more likely cut short than let complete waits for it to pass
(frugal 13).

The reboot rule (paper 000 sec. 4.4.3; ``holds.held_classes``) holds a class of jobs that surely
needs longer than the hours left before the reboot. A job that never ran has no class, so it
started at once, and if it needed longer the reboot killed it (docs/robust-policies.md,
"frugal 13"). What its user's recent
jobs needed says how likely it is to need longer (the pool's completed jobs, for a user with too
few). Started now, with chance p it runs into the reboot and starts again after it, when it
would have started if held, so it finishes no later for the hold; with chance 1 - p it would
have completed, and the hold delays it by the hours left, tau. Holding saves p tau hours of a
machine's draw in expectation and costs (1 - p) tau hours of a job's wait: it is done where
p >= 1/2, where the saving is at least the cost, hour for hour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from plugins.contract.clock import HOUR, next_reboot
from plugins.frugal.fates import CENTRES
from plugins.frugal.user_runtimes import MIN_SEEN

MORE_LIKELY_THAN_NOT = 0.5


def reboot_wait(
    now: float,
    reboot_hour: float | None,
    user_runtimes_s: Sequence[float],
    pool_runtimes: np.ndarray,
) -> float | None:
    """The next reboot, if a job queued now for the first time should wait for it; else None."""
    reboot = next_reboot(now, reboot_hour)
    if math.isinf(reboot):
        return None
    chance = chance_to_outlast(reboot - now, user_runtimes_s, pool_runtimes, MIN_SEEN)
    return reboot if chance is not None and chance >= MORE_LIKELY_THAN_NOT else None


def chance_to_outlast(
    left_s: float, user_runtimes_s: Sequence[float], pool_runtimes: np.ndarray, min_seen: int
) -> float | None:
    """The chance a new job needs more than ``left_s`` seconds: the share of its user's recent
    runtimes (at least ``min_seen`` of them), else of the pool's completed runtimes
    (``JobFates.runtimes``, quarter-hour bins); None before any job completed."""
    if len(user_runtimes_s) >= min_seen:
        return sum(1 for r in user_runtimes_s if r > left_s) / len(user_runtimes_s)
    seen = float(pool_runtimes.sum())
    if not seen:
        return None
    return float(pool_runtimes[left_s < CENTRES * HOUR].sum()) / seen
