"""The policies' calendar: the hour of the day or of the week (a bandit's state), and the nightly
reboot (paper 000 sec. 5) that an idle period ends at and the local-knowledge rule (sec. 4.4.3)
keeps jobs from crossing. A pool whose machines do not reboot nightly has no reboot hour
(``None``): its next reboot is never (infinity)."""

from __future__ import annotations

import math

import numpy as np

DAY = 86400.0
HOUR = 3600.0
EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday = 0)


def hour_of_day(t: float) -> int:
    return int(t % DAY // HOUR)


def hour_of_week(t: float) -> int:
    return int((t // DAY + EPOCH_WEEKDAY) % 7) * 24 + hour_of_day(t)


def next_reboot(t: float, reboot_hour: float | None) -> float:
    """The first reboot (daily at ``reboot_hour``) after ``t``; infinity without one."""
    if reboot_hour is None:
        return math.inf
    reboot = t - t % DAY + reboot_hour * HOUR
    return reboot if reboot > t else reboot + DAY


def hours_to_reboot(to_reboot_h: float, after_h: np.ndarray) -> np.ndarray:
    """From a start ``after_h`` hours from now, the hours to the daily reboot that follows it
    (``to_reboot_h``: hours from now to the next one; infinite without reboots)."""
    if math.isinf(to_reboot_h):
        return np.full(np.shape(after_h), math.inf)
    left = (to_reboot_h - np.asarray(after_h, dtype=float)) % (DAY / HOUR)
    return np.where(left > 0, left, DAY / HOUR)


def crosses_reboot(t: float, seconds: float, reboot_hour: float | None) -> bool:
    """Whether ``seconds`` from ``t`` run past the next reboot."""
    return t + seconds > next_reboot(t, reboot_hour)
