"""The futile-start hold: keep a class off a room while a start there would almost surely be cut
short, because such a start does not bring its jobs' completion closer.

A vanilla job restarts from the beginning, so an attempt that an owner or the reboot cuts short
only burns energy: it does not bring the job's completion closer. The reboot rule (paper 000
sec. 4.4.3) holds a class whose start the reboot would surely kill; this extends it to owners.
A class-k attempt started now in room c completes with chance

    q[c, k] = sum over runtimes R of share[k, R] * (1 - P_c(R)) * [R <= B],

(P_c(R) the chance an owner of c arrives within R hours, from the learned hour-of-week rates,
arrivals.py; B the hours to the reboot; share[k] the runtimes of the completed jobs that ran over
k hours, fates.py). While q is below ``futile_below`` the class is kept off c: it starts in a
room where it can finish, or waits for an hour in which it can. The payback hold (payback.py)
does not see this: it weighs the hours an attempt loses, and an attempt an owner ends within
minutes loses few, however often it is repeated. A job that never ran (class 0) is not held:
its runtime is anyone's.

Since frugal 10 (``futile_later``) no hold, this one or the payback hold, keeps a class off the
rooms where a start now is at least as likely to complete as any start later within the day
(``best_starts``). Without that, a class no start of whose day reaches the threshold was held
until the starvation bound released it, a day per wait, to start anywhere as without advice,
often at a busy hour (a 20-hour job, docs/robust-policies.md "`frugal` 10"); now it starts at
its best hour, mostly just after the reboot, in its best room. A class that no start within the
day can complete stays held.
"""

from __future__ import annotations

import numpy as np

from plugins.contract.clock import hours_to_reboot


def completion_chances(
    evicted: np.ndarray,
    runtimes_h: np.ndarray,
    shares: np.ndarray,
    to_reboot_h: float,
    bin_h: float = 0.0,
) -> np.ndarray:
    """q[d, c, k]: the chance a class-k start in room c, d hours from now, completes
    (``evicted[d, c, r]``: the chance an owner arrives within ``runtimes_h[r]`` of that start;
    ``shares[k, r]``: the class's runtimes, bins ``bin_h`` wide around them, a bin fitting before
    the reboot when its shortest runtime does, as the reboot rule counts whole hours;
    ``to_reboot_h``: hours from now to the next reboot)."""
    shortest = np.asarray(runtimes_h, dtype=float) - bin_h / 2
    reboot = hours_to_reboot(to_reboot_h, np.arange(len(evicted)))[:, None]
    fits = shortest[None, :] <= reboot
    return ((1.0 - evicted) * fits[:, None, :]) @ shares.T


def futile_starts(chances: np.ndarray, below: float) -> np.ndarray:
    """held[c, k]: whether a class-k start in room c now completes with chance below ``below``
    (``chances``: q of ``completion_chances``). A job that never ran (class 0) is not held."""
    held = chances[0] < below
    held[:, 0] = False
    return held


def best_starts(chances: np.ndarray) -> np.ndarray:
    """best[c, k]: whether a class-k start in room c now may complete and is at least as likely
    to as any start later within ``chances`` (q of ``completion_chances``, d = 0 and later)."""
    later = chances[1:].max(axis=(0, 1)) if len(chances) > 1 else np.zeros(chances.shape[2])
    return (chances[0] >= later[None, :]) & (chances[0] > 0.0)
