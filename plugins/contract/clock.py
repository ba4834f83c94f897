"""The policies' calendar: the hour of the day or of the week (a bandit's state), and the nightly
reboot (paper 000 sec. 5) that an idle period ends at and the local-knowledge rule (sec. 4.4.3)
keeps jobs from crossing."""

from __future__ import annotations

DAY = 86400.0
HOUR = 3600.0
EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday = 0)


def hour_of_day(t: float) -> int:
    return int(t % DAY // HOUR)


def hour_of_week(t: float) -> int:
    return int((t // DAY + EPOCH_WEEKDAY) % 7) * 24 + hour_of_day(t)


def next_reboot(t: float, reboot_hour: float) -> float:
    """The first reboot (daily at ``reboot_hour``) after ``t``."""
    reboot = t - t % DAY + reboot_hour * HOUR
    return reboot if reboot > t else reboot + DAY


def crosses_reboot(t: float, seconds: float, reboot_hour: float) -> bool:
    """Whether ``seconds`` from ``t`` run past the next reboot."""
    return t + seconds > next_reboot(t, reboot_hour)
