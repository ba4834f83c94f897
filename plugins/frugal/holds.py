"""Where and when ``frugal`` keeps a class of jobs waiting: the reboot rule and, when asked,
sure never-finishers for the whole pool; the payback and futile-start holds per room."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.frugal.arrivals import OwnerArrivals
from plugins.frugal.fates import BINS_PER_HOUR, JobFates
from plugins.frugal.futile import best_starts, completion_chances, futile_starts
from plugins.frugal.payback import MAX_WAIT_H, kept_off, lost_hours


def held_classes(fates: JobFates, to_reboot_h: float, options: Mapping[str, Any]) -> np.ndarray:
    """Per class, whether advice keeps its jobs waiting everywhere now."""
    held = np.arange(PRIOR_HOURS_CLASSES) >= max(to_reboot_h, 1.0)
    threshold = options["hold_never_finishers"]
    if threshold > 0:
        sure = fates.never_finisher_bound() > threshold
        sure[0] = False  # a job that never ran is not held for what other jobs did
        held |= sure & (fates.left >= options["min_fates"])
    return held


def room_holds(
    arrivals: OwnerArrivals,
    fates: JobFates,
    now: float,
    to_reboot_h: float,
    options: Mapping[str, Any],
    waiting: np.ndarray,
) -> np.ndarray:
    """Per room and class, the payback and the futile-start holds (each off when asked), none
    where a class is at its best start of the day (futile.py, ``futile_later``); the payback
    hold expects a later start among as many of the safest machines as ``waiting`` jobs of the
    class (waiting.py, ``payback_queue``), counting the jobs each room's machines run at once."""
    rooms = len(arrivals.machines)
    off = np.zeros((rooms, PRIOR_HOURS_CLASSES), dtype=bool)
    how, futile = options["payback"], options["futile_below"]
    if not rooms:
        return off
    slots = np.asarray(arrivals.slots)
    share: float | np.ndarray = options["payback_later"]
    if options["payback_queue"] == "on":
        share = np.maximum(share, waiting / slots.sum())
    runtimes, shares = fates.runtime_spread()
    best_now = np.zeros_like(off)
    if futile > 0:
        starts = MAX_WAIT_H if options["futile_later"] == "on" else 1
        evicted = arrivals.eviction_chance_ahead(now, runtimes, starts)
        chances = completion_chances(evicted, runtimes, shares, to_reboot_h, 1 / BINS_PER_HOUR)
        off |= futile_starts(chances, futile)
        if starts > 1:
            best_now = best_starts(chances)
    if how == "mean":
        needed = fates.runtime_needed_h()
        rates = arrivals.rates_ahead(now, MAX_WAIT_H + int(np.ceil(needed.max())) + 2)
        off |= kept_off(lost_hours(rates, needed, to_reboot_h), slots, share)
    elif how == "spread":
        rates = arrivals.rates_ahead(now, MAX_WAIT_H + int(np.ceil(runtimes.max())) + 2)
        off |= kept_off(lost_hours(rates, runtimes, to_reboot_h) @ shares.T, slots, share)
    return off & ~best_now  # no hold at a class's best start of the day (futile.py)
