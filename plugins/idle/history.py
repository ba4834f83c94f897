"""What a policy keeps of each machine's past: merged owner sessions and reboot instants.

Only what a live pool reports is stored (login, logout, reboot), in compact ``array('d')`` columns:
a campus year is about 1.2 M sessions and 0.5 M reboots.
"""

from __future__ import annotations

import bisect
from array import array

import numpy as np

DAY = 86400.0


class MachineHistory:
    """Sessions (owners overlapping on one machine count as one) and reboots, in time order."""

    __slots__ = ("logins", "logouts", "open_login", "owners", "reboots")

    def __init__(self) -> None:
        self.logins = array("d")
        self.logouts = array("d")
        self.reboots = array("d")
        self.owners = 0
        self.open_login = float("nan")

    def login(self, t: float) -> None:
        self.owners += 1
        if self.owners == 1:
            self.open_login = t

    def logout(self, t: float) -> None:
        if self.owners == 0:
            return
        self.owners -= 1
        if self.owners == 0:
            self.logins.append(self.open_login)
            self.logouts.append(t)
            self.open_login = float("nan")

    def reboot(self, t: float) -> None:
        self.reboots.append(t)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of (logins, logouts, reboots) of closed sessions: safe to read from a training
        thread while ``observe`` appends (a numpy view would stop the arrays from growing)."""
        logouts = np.array(self.logouts)
        return np.array(self.logins)[: len(logouts)], logouts, np.array(self.reboots)

    def blockers(self, until: float) -> np.ndarray:
        """Sorted times that end an idle period (logins and reboots), up to ``until``."""
        logins, _, reboots = self.columns()
        times = np.concatenate([logins, reboots, [self.open_login]])
        times = times[np.isfinite(times) & (times <= until)]
        return np.sort(times)

    def last_start(self, t: float) -> tuple[float, float] | None:
        """(start, active duration) of the idle period under way at ``t``: last logout or reboot.
        Bisects the arrays in place: this runs for every advised machine."""
        i = bisect.bisect_right(self.logouts, t) - 1
        r = bisect.bisect_right(self.reboots, t) - 1
        if i < 0 and r < 0:
            return None
        if r >= 0 and (i < 0 or self.reboots[r] > self.logouts[i]):
            return self.reboots[r], 0.0
        return self.logouts[i], self.logouts[i] - self.logins[i]


def history_from_sessions(
    logins: np.ndarray, logouts: np.ndarray, start: float, until: float, reboot_hour: float | None
) -> MachineHistory:
    """A machine's history up to ``until`` straight from a trace, as a replay would report it: the
    daily reboot happens unless an owner is logged in (then it is postponed, which only lengthens
    the session; paper 004 sec. V-A1)."""
    history = MachineHistory()
    order = np.argsort(logins, kind="stable")
    end = -np.inf
    for a, b in zip(logins[order].tolist(), logouts[order].tolist(), strict=True):
        if a >= until:
            break
        if a <= end:  # overlaps the session before: one merged session
            end = max(end, b)
            continue
        if np.isfinite(end):
            history.logout(end)
        history.login(a)
        end = b
    if np.isfinite(end) and end <= until:
        history.logout(end)
    if reboot_hour is None:  # (a pool whose machines do not reboot nightly)
        return history
    first = start - start % DAY + reboot_hour * 3600.0
    if first <= start:
        first += DAY
    days = np.arange(first, until, DAY)
    ins, outs, _ = history.columns()
    pos = np.searchsorted(ins, days, side="right") - 1
    busy = (pos >= 0) & (outs[np.maximum(pos, 0)] > days) if len(outs) else days < -np.inf
    if np.isfinite(history.open_login):
        busy |= days >= history.open_login
    history.reboots.extend(days[~busy].tolist())
    return history
