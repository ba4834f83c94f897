"""The payback hold: keep a class off a room when waiting for a safer hour is expected to finish
its jobs no later than starting there now, so the hold costs them nothing in expectation and
saves the run an owner (or the reboot) would cut short.

Paper 000's eq. 4 rewards queueing (+1) only when no resource could have run the job to
completion and punishes it (-1) otherwise; a bandit learns that per state from its own queue
decisions. Here the same test is modelled and weighed in hours: a start at hour d loses, in
expectation, the time its attempt runs before an owner arrives or the reboot kills it,

    lost(d) = integral_0^x S_d(u) du - R S_d(R) [R <= B_d],   x = min(R, B_d),

(R a runtime the class needs, S_d the chance no owner arrived u hours after the start, B_d the
hours from that start to the reboot; E[T 1{T < R}] for the killing time T), averaged over the
runtimes of the class's completed jobs (or taken at their mean, ``payback=mean``). A class is
kept off room c now when lost_c(0) > d + lost_later(d) for some d in 1..24: waiting d hours is
expected to end sooner. It departs from the paper in two ways: it counts one attempt only (an
evicted job's rerun is advised again when it is back in the queue, as the class it has then
reached), and it cannot see which machines will be free later, so lost_later is the mean over a
machine in the safest rooms holding a share of the machines (``payback_later``). The default
since frugal 3, 0, takes the safest room: an optimistic guess (it may be busy then) that the
hourly re-test and the starvation bound keep cheap. Replayed on the 14 shape members at scale 1
it kept the mean overhead at most 0.825 times random's, and it captured more of the saving than
1 (a machine drawn as random placement draws them, frugal 2) on 12 of the 14
(docs/robust-policies.md).
"""

from __future__ import annotations

import numpy as np

from plugins.contract.clock import hours_to_reboot

MAX_WAIT_H = 24
"""The latest start compared: a day, the starvation bound a site is advised to set."""


def _integral(load: np.ndarray, rates: np.ndarray, upto: np.ndarray) -> tuple[np.ndarray, ...]:
    """For each row of hourly ``rates`` starting at hour 0 (load: their cumulative sum with a
    leading 0), the integral of the survival exp(-load) from 0 to ``upto[k]`` hours and the
    survival at ``upto[k]`` (rows x classes), piecewise exact within an hour."""
    survival = np.exp(-load)  # at whole hours
    safe = np.where(rates > 1e-12, rates, 1.0)
    per_hour = np.where(rates > 1e-12, (1 - np.exp(-rates)) / safe, 1.0) * survival[:, :-1]
    area = np.concatenate([np.zeros((len(rates), 1)), np.cumsum(per_hour, axis=1)], axis=1)
    whole = np.minimum(np.floor(upto).astype(int), rates.shape[1] - 1)
    frac = np.clip(upto - whole, 0.0, 1.0)
    lam = rates[:, whole]
    s0 = survival[:, whole]
    part = np.where(lam > 1e-12, (1 - np.exp(-lam * frac)) / np.where(lam > 1e-12, lam, 1.0), frac)
    return area[:, whole] + s0 * part, s0 * np.exp(-lam * frac)


def lost_hours(rates_ahead: np.ndarray, runtimes_h: np.ndarray, to_reboot_h: float) -> np.ndarray:
    """L[c, d, k]: expected hours a class-k attempt started d hours from now in room c runs
    before it is cut short (0 if it completes), for d = 0..MAX_WAIT_H.

    ``rates_ahead[c, j]``: owner arrivals per hour in room c, j hours from now (at least
    MAX_WAIT_H + the longest runtime + 1 columns); ``to_reboot_h``: hours to the next reboot."""
    runtimes = np.asarray(runtimes_h, dtype=float)
    span = int(np.ceil(runtimes.max())) + 1 if len(runtimes) else 1
    out = np.empty((len(rates_ahead), MAX_WAIT_H + 1, len(runtimes)))
    for d in range(MAX_WAIT_H + 1):
        rates = rates_ahead[:, d : d + span]
        load = np.concatenate([np.zeros((len(rates), 1)), np.cumsum(rates, axis=1)], axis=1)
        reboot = float(hours_to_reboot(to_reboot_h, np.array(d)))
        upto = np.minimum(runtimes, reboot)
        area, survives = _integral(load, rates, upto)
        completes = np.where(runtimes <= reboot, runtimes * survives, 0.0)
        out[:, d, :] = area - completes
    return out


def kept_off(lost: np.ndarray, machines: np.ndarray, share: float | np.ndarray = 0.0) -> np.ndarray:
    """held[c, k]: whether class k is kept off room c now, as waiting pays (``lost``: L[c, d, k]
    of ``lost_hours``, or its mean over a class's runtimes; ``machines`` per room, or the jobs
    they run at once). The later start is in the safest room (``share`` 0), or in a machine
    drawn from the safest rooms that hold ``share`` of the machines (1: any machine, as random
    placement), per class when ``share`` is an array."""
    if not len(lost):
        return np.zeros((0, lost.shape[-1]), dtype=bool)
    after = lost[:, 1:, :]
    if np.all(np.asarray(share) <= 0):
        then = after.min(axis=0)
    else:
        order = np.argsort(after, axis=0)
        sizes = np.asarray(machines, dtype=float)[order]
        wanted = np.maximum(share * sizes.sum(axis=0), 1.0)  # the safest room: its first machine
        taken = np.clip(wanted - (np.cumsum(sizes, axis=0) - sizes), 0.0, sizes)
        then = (taken * np.take_along_axis(after, order, axis=0)).sum(axis=0) / taken.sum(axis=0)
    later = (np.arange(1, lost.shape[1])[:, None] + then).min(axis=0)  # per class
    return lost[:, 0, :] > later[None, :]
