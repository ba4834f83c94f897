"""Training samples and features of paper 004 sec. V-A, from a machine's history.

An idle period starts at a logout or a reboot (a zero-length "synthetic" user, cases B and C of
figure 4) and ends at the next login or reboot. Inside it a sample is taken every ``delta``
seconds (sec. V-A2): a synthetic user at ``s + k*delta`` whose target is the idle time still ahead,
``i - k*delta``. Following the tuple ``(L^i + k*delta, c, L^o, i - k*delta)`` of the paper, the
sample's ``epochLogin`` and calendar features are its own time, ``epochLogout`` the period start
and ``activeDuration`` the session that ended there (0 after a reboot). Nothing after the sample
time is used: the target is the only look ahead.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from plugins.idle.history import DAY, MachineHistory

FEATURES = (
    "epochLogin",
    "epochLogout",
    "activeDuration",
    "minute",
    "hourOfDay",
    "dayOfWeek",
    "dayOfMonth",
    "month",
    "year",
    "termWeeks",
    "term",
    "cluster",
    "machine",
)
BEST_FEATURES = (
    "epochLogin",
    "epochLogout",
    "activeDuration",
    "hourOfDay",
    "dayOfWeek",
    "dayOfMonth",
    "month",
)
"""The subset the paper found best with the RandomForest's importances (sec. VI-B2)."""

EPOCH0 = 946684800.0  # 2000-01-01: epochs are scaled as years since then over a century
EPOCH_SPAN = 100 * 365.25 * DAY
TERM_WEEKS_MAX = 13.0


@dataclass(frozen=True)
class Calendar:
    """Teaching terms (start, end) in time order; term numbers cycle 1..3 through the list."""

    starts: np.ndarray
    ends: np.ndarray
    start_list: list[float]
    end_list: list[float]

    @classmethod
    def of(cls, terms: Sequence[tuple[float, float]]) -> Calendar:
        starts = [float(a) for a, _ in sorted(terms)]
        ends = [float(b) for _, b in sorted(terms)]
        return cls(np.array(starts), np.array(ends), starts, ends)


@dataclass(frozen=True)
class Periods:
    """Idle periods of one machine: start, end, and the active duration that preceded them."""

    start: np.ndarray
    end: np.ndarray
    active: np.ndarray


def idle_periods(history: MachineHistory, until: float, since: float = -np.inf) -> Periods:
    """Periods starting in [since, until) that ended by ``until`` (open ones have no target)."""
    logins, logouts, reboots = history.columns()
    durations = logouts - logins
    start = np.concatenate([logouts, reboots])
    active = np.concatenate([durations, np.zeros(len(reboots))])
    keep = (start >= since) & (start < until)
    start, active = start[keep], active[keep]
    blockers = history.blockers(until)
    nxt = np.searchsorted(blockers, start, side="right")
    done = nxt < len(blockers)
    end = blockers[np.minimum(nxt, len(blockers) - 1)] if len(blockers) else start
    order = np.argsort(start[done], kind="stable")
    return Periods(start[done][order], end[done][order], active[done][order])


def sample_times(
    periods: Periods, delta: float, max_samples: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic samples every ``delta`` (eq. of sec. V-A2), a uniform subset of at most
    ``max_samples``: returns each sample's period index and time."""
    counts = np.ceil((periods.end - periods.start) / delta).astype(np.int64)
    counts = np.maximum(counts, 1)
    total = int(counts.sum())
    if total > max_samples:
        picks = np.sort(rng.choice(total, size=max_samples, replace=False))
    else:
        picks = np.arange(total)
    bounds = np.cumsum(counts)
    period = np.searchsorted(bounds, picks, side="right")
    k = picks - (bounds[period] - counts[period])
    return period, periods.start[period] + k * delta


def _terms(t: np.ndarray, calendar: Calendar) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index of the term under way (or -1), whether in term, and the week of that term."""
    if not len(calendar.starts):
        return np.full(len(t), -1), np.zeros(len(t), dtype=bool), np.zeros(len(t))
    idx = np.searchsorted(calendar.starts, t, side="right") - 1
    safe = np.maximum(idx, 0)
    in_term = (idx >= 0) & (t < calendar.ends[safe])
    return idx, in_term, (t - calendar.starts[safe]) // (7 * DAY) + 1


def feature_matrix(
    t: np.ndarray,
    period_start: np.ndarray,
    active: np.ndarray,
    codes: tuple[float, float],
    calendar: Calendar,
    names: Sequence[str],
) -> np.ndarray:
    """Each feature divided by its largest value (sec. V-A3); ``codes`` are the scaled cluster
    and machine numbers."""
    stamp = t.astype("datetime64[s]")
    month_start = stamp.astype("datetime64[M]")
    idx, in_term, weeks = _terms(t, calendar)
    columns = {
        "epochLogin": (t - EPOCH0) / EPOCH_SPAN,
        "epochLogout": (period_start - EPOCH0) / EPOCH_SPAN,
        "activeDuration": np.minimum(active, DAY) / DAY,
        "minute": (t % 3600.0) // 60.0 / 59.0,
        "hourOfDay": (t % DAY) // 3600.0 / 23.0,
        "dayOfWeek": ((t // DAY + 3) % 7) / 6.0,
        "dayOfMonth": (stamp.astype("datetime64[D]") - month_start).astype(np.int64) / 30.0,
        "month": (month_start.astype(np.int64) % 12) / 11.0,
        "year": (month_start.astype(np.int64) // 12 - 30) / 100.0,
        "termWeeks": np.where(in_term, np.minimum(weeks, TERM_WEEKS_MAX), -1.0) / TERM_WEEKS_MAX,
        "term": np.where(in_term, idx % 3 + 1, -1.0) / 3.0,
        "cluster": np.full(len(t), codes[0]),
        "machine": np.full(len(t), codes[1]),
    }
    return np.column_stack([columns[name] for name in names]).astype(np.float64)


def training_samples(
    history: MachineHistory,
    until: float,
    codes: tuple[float, float],
    calendar: Calendar,
    names: Sequence[str],
    delta: float,
    max_samples: int,
    rng: np.random.Generator,
    since: float = -np.inf,
) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets (remaining idle seconds) of periods in [since, until)."""
    periods = idle_periods(history, until, since)
    if not len(periods.start):
        return np.empty((0, len(names))), np.empty(0)
    period, t = sample_times(periods, delta, max_samples, rng)
    x = feature_matrix(t, periods.start[period], periods.active[period], codes, calendar, names)
    return x, periods.end[period] - t


def feature_row(
    t: float,
    period_start: float,
    active: float,
    codes: tuple[float, float],
    calendar: Calendar,
    names: Sequence[str],
) -> list[float]:
    """One row of ``feature_matrix`` in plain Python (same arithmetic, same bits): advice asks
    for single machines millions of times a year, where numpy's per-call cost dominates. Paired
    full-year idle-min replays (compiled): 283.4 s user with this row, 384.8 s with a one-row
    ``feature_matrix`` (26% of the replay), the same ``jobs.csv`` to the byte."""
    stamp = datetime.fromtimestamp(t, UTC)
    idx = bisect.bisect_right(calendar.start_list, t) - 1
    in_term = idx >= 0 and t < calendar.end_list[idx]
    weeks = (t - calendar.start_list[idx]) // (7 * DAY) + 1 if in_term else 0.0
    columns = {
        "epochLogin": (t - EPOCH0) / EPOCH_SPAN,
        "epochLogout": (period_start - EPOCH0) / EPOCH_SPAN,
        "activeDuration": min(active, DAY) / DAY,
        "minute": (t % 3600.0) // 60.0 / 59.0,
        "hourOfDay": (t % DAY) // 3600.0 / 23.0,
        "dayOfWeek": ((t // DAY + 3) % 7) / 6.0,
        "dayOfMonth": (stamp.day - 1) / 30.0,
        "month": (stamp.month - 1) / 11.0,
        "year": (stamp.year - 2000) / 100.0,
        "termWeeks": (min(weeks, TERM_WEEKS_MAX) if in_term else -1.0) / TERM_WEEKS_MAX,
        "term": (idx % 3 + 1 if in_term else -1.0) / 3.0,
        "cluster": codes[0],
        "machine": codes[1],
    }
    return [float(columns[name]) for name in names]


def features_now(
    history: MachineHistory,
    t: float,
    free_since: float,
    codes: tuple[float, float],
    calendar: Calendar,
    names: Sequence[str],
) -> list[float]:
    """The feature row of a machine at ``t`` for prediction, from its past only."""
    last = history.last_start(t)
    start, active = last if last is not None else (free_since, 0.0)
    return feature_row(t, start, active, codes, calendar, names)
