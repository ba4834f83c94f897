"""Options of ``frugal`` (policy.py), settable with ``--set key=value``. An option that added a rule
names the version its off value gives back, so earlier versions' replays stay reproducible."""

from __future__ import annotations

from collections.abc import Mapping

from plugins.contract.option_pairs import SWITCH_WORDS, parse_switch
from plugins.contract.policy import Option
from plugins.frugal.suspects import TRUSTED_BATCHES


def _share(value: float) -> str | None:
    return None if 0.0 <= value < 1.0 else "must be at least 0 and below 1 (0: off)"


def _on_off(text: str) -> str:
    """A switch, kept as ``on`` or ``off`` whichever word turned it: the policy and what
    records its options compare those two only."""
    return "on" if parse_switch(text) else "off"


def _switched(value: str) -> str | None:
    """Text comes parsed to on/off; a value given as no text (a bool) skipped the parser."""
    return None if value in ("on", "off") else f"must be a switch as text: {SWITCH_WORDS}"


def _payback(value: str) -> str | None:
    return None if value in ("mean", "spread", "off") else "must be mean, spread or off"


FRUGAL_OPTIONS: Mapping[str, Option] = {
    "hold_never_finishers": Option(
        0.0,
        float,
        "hold a class whose never-finisher share is surely above this (0: off)",
        _share,
    ),
    "min_fates": Option(
        50,
        int,
        "jobs of a class seen leaving before it may be held",
        lambda v: None if v >= 0 else "must be 0 or more",
    ),
    "keep_off_hours": Option(
        23.0,
        float,
        "keep a suspected never-finisher off every machine this long after each eviction "
        "(suspects.py; 0: off, frugal 3; 24: frugal 4 and 5, whose restart the day's bound "
        "then matches as without advice)",
        lambda v: None if v >= 0 else "must be 0 or more",
    ),
    "trusted_batches": Option(
        TRUSTED_BATCHES,
        int,
        "batches with a completed job before a suspect is kept off at more than one of its "
        "evictions (suspects.py; 0: at each, frugal 8)",
        lambda v: None if 0 <= v <= 1000 else "must be from 0 to 1000",
    ),
    "futile_below": Option(
        0.2,
        float,
        "keep a class off a room while a start there completes with a chance below this "
        "(futile.py; 0: off, frugal 4)",
        _share,
    ),
    "futile_later": Option(
        "on",
        _on_off,
        "hold no class where a start now is at least as likely to complete as any start "
        "later within the day (futile.py; off: frugal 9, which held a class no start could "
        "likely finish until the day's bound released it)",
        _switched,
    ),
    "cut_short": Option(
        "on",
        _on_off,
        "rank the class of jobs that ran 23 hours, longer than any completed job needed, "
        "where an attempt is stopped soonest, never held (cut_short.py; off: frugal 5)",
        _switched,
    ),
    "cut_short_batches": Option(
        "on",
        _on_off,
        "rank the other jobs of such a job's batch in that class too and keep them off after "
        "each eviction, until a job of the batch completes (batch_class.py; off: frugal 6)",
        _switched,
    ),
    "user_quantile": Option(
        0.1,
        float,
        "rank a new job in the class of the hours all but this share of its user's recent "
        "jobs needed (user_runtimes.py; 0: off, frugal 7)",
        _share,
    ),
    "reboot_wait": Option(
        "on",
        _on_off,
        "hold a new job until the nightly reboot has passed where all but user_quantile of its "
        "user's recent runtimes (else the pool's) are longer than the time left (reboot_wait.py; "
        "off: frugal 12)",
        _switched,
    ),
    "payback": Option(
        "spread",
        str,
        "keep a class off a room while waiting is expected to finish its jobs sooner "
        "(payback.py), over the runtimes its completed jobs had (spread) or for their mean "
        "(mean); off: the reboot rule only, as frugal 1",
        _payback,
    ),
    "payback_queue": Option(
        "on",
        _on_off,
        "expect a held job to start later among as many of the safest machines as jobs of its "
        "class have waited for less than a day (waiting.py; off: frugal 10)",
        _switched,
    ),
    "payback_later": Option(
        0.0,
        float,
        "where a held job is expected to start later: in the safest rooms holding this "
        "share of the machines (0: the safest room, frugal 3; 1: any machine, as random "
        "placement, frugal 2)",
        lambda v: None if 0.0 <= v <= 1.0 else "must be from 0 to 1",
    ),
}
