"""Where a job that surely never finishes is stopped soonest (frugal 6).

A job whose attempt ran 23 hours without completing, longer than any completed job needed, is a
never-finisher in all but name: it needs more than 23 hours, and a machine rebooted daily gives
no attempt more than 24. Each of its attempts burns energy until an owner's arrival or the
reboot stops it, and advice cannot stop it; what advice can pick is where the attempt starts.
The reboot rule (paper 000 sec. 4.4.3) holds such a class until the reboot has passed, which
for a never-finisher is the worst start of all: the quiet night and morning ahead are the
longest run it can get, and the day's starvation bound then releases it at that same hour,
matched as without advice. So this class is ranked by the energy an attempt started now burns,
W x E[hours until an owner or the reboot stops it], least first, and never held: an attempt
started where owners come soonest is the shortest one.
"""

from __future__ import annotations

import numpy as np

from plugins.contract.advice import PRIOR_HOURS_CLASSES

CUT_SHORT_FROM = PRIOR_HOURS_CLASSES - 1
"""Class 23, and only it: lower classes also hold good jobs longer than any completed yet (on
``neglected-batches`` seed 2 a 16-hour job of a batch of 8-hour jobs, cut short from the class
of the longest completed job, was started 370 times; docs/robust-policies.md)."""
ATTEMPT_GRID_H = np.arange(0.5, 24.0, 1.0)
"""Hourly midpoints over a day: no attempt outlives the daily reboot."""


def first_cut_short_class(first_suspect_class: int) -> int:
    """The first class cut short: 23, unless a completed job needed 23 hours or more (none)."""
    return max(first_suspect_class, CUT_SHORT_FROM)


def attempt_hours(evicted: np.ndarray, to_reboot_h: float) -> np.ndarray:
    """Per room, the expected hours an attempt started now runs before it is stopped.

    ``evicted[c, i]``: the chance an owner of room c arrives within ``ATTEMPT_GRID_H[i]`` hours;
    the attempt runs on while none has, and never past the reboot (the integral of its survival).
    """
    running = (1.0 - evicted) * (to_reboot_h > ATTEMPT_GRID_H)
    return running.sum(axis=1)
