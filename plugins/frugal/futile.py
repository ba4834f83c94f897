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
room where it can finish, or waits for an hour in which it can, and the starvation bound releases
it after a day if none comes, to start anywhere (so a class no hour of whose day is likely to
finish loses a day per wait; docs/robust-policies.md counts it per job). The payback hold
(payback.py) does not see this: it weighs the hours an attempt loses, and an attempt an owner
ends within minutes loses few, however often it is repeated. A job that never ran (class 0) is
not held: its runtime is anyone's.
"""

from __future__ import annotations

import numpy as np


def futile_starts(
    evicted: np.ndarray,
    runtimes_h: np.ndarray,
    shares: np.ndarray,
    to_reboot_h: float,
    below: float,
    bin_h: float = 0.0,
) -> np.ndarray:
    """held[c, k]: whether a class-k start in room c now completes with chance below ``below``
    (``evicted[c, r]``: the chance an owner arrives within ``runtimes_h[r]``; ``shares[k, r]``:
    the class's runtimes, bins ``bin_h`` wide around them, a bin fitting before the reboot when
    its shortest runtime does, as the reboot rule counts whole hours; ``to_reboot_h``: hours to
    the next reboot)."""
    shortest = np.asarray(runtimes_h, dtype=float) - bin_h / 2
    fits = shortest <= (to_reboot_h % 24.0 or 24.0)
    held = ((1.0 - evicted) * fits) @ shares.T < below
    held[:, 0] = False
    return held
