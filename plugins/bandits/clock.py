"""The placement bandits' clock: the hour of the day or of the week (part of their states), and
the nightly reboot that the local-knowledge rule (paper 000 sec. 4.4.3) keeps jobs from crossing."""

from __future__ import annotations

DAY = 86400.0
HOUR = 3600.0
EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday = 0)


def hour_of_day(t: float) -> int:
    return int(t % DAY // HOUR)


def hour_of_week(t: float) -> int:
    return int((t // DAY + EPOCH_WEEKDAY) % 7) * 24 + hour_of_day(t)


def crosses_reboot(t: float, seconds: float, reboot_hour: float) -> bool:
    """Whether ``seconds`` from ``t`` run past the next reboot (daily at ``reboot_hour``)."""
    reboot = t - t % DAY + reboot_hour * HOUR
    if reboot <= t:
        reboot += DAY
    return t + seconds > reboot
