"""A new job the nightly reboot would surely cut short waits for it to pass (frugal 13).

The reboot rule (paper 000 sec. 4.4.3; ``holds.held_classes``) holds a class of jobs that surely
needs longer than the hours left before the reboot: such a job would restart after it anyway,
so waiting does not delay its completion. A job that never ran has no class, so it started at
once, and if it needed longer the reboot killed it (docs/robust-policies.md, "frugal 13").
What its user's recent jobs needed says how likely it is to need longer (the pool's completed
jobs, for a user with too few), and ``user_quantile`` (frugal 8) already says what is sure: all
but that share of them. So a new job is held until the reboot has passed where at least
1 - ``user_quantile`` of those runtimes are longer than the time left; the hold then delays at
most that share of such jobs (by the time left), and saves the others' burn until the reboot.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from plugins.contract.clock import HOUR, next_reboot
from plugins.frugal.fates import CENTRES
from plugins.frugal.user_runtimes import MIN_SEEN


def reboot_wait(
    now: float,
    reboot_hour: float | None,
    user_runtimes_s: Sequence[float],
    pool_runtimes: np.ndarray,
    quantile: float,
) -> float | None:
    """The next reboot, if a job queued now for the first time should wait for it (all but
    ``quantile`` of the runtimes longer than the time left); else None."""
    reboot = next_reboot(now, reboot_hour)
    if math.isinf(reboot):
        return None
    chance = chance_to_outlast(reboot - now, user_runtimes_s, pool_runtimes, MIN_SEEN)
    return reboot if chance is not None and chance >= 1.0 - quantile else None


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
