"""Idle periods, reboot splitting, synthetic samples and the no-look-ahead rule (paper 004 V-A)."""

from __future__ import annotations

import numpy as np
import pytest
from tracekit import MONDAY, H, inventory, run_recorded, trace

from plugins.contract.policy import PolicyContext
from plugins.idle.features import (
    FEATURES,
    Calendar,
    feature_matrix,
    features_now,
    idle_periods,
    sample_times,
    training_samples,
)
from plugins.idle.history import DAY, MachineHistory, history_from_sessions
from plugins.idle.policy import IdleAvgPolicy
from simulator.campus.replay import machine_infos

# Monday 10-11 and 14-15, Tuesday 02-04 (over the 03:00 reboot, which is postponed), Wednesday 10-11
SESSIONS = [(10 * H, 0, 11 * H), (14 * H, 0, 15 * H), (DAY + 2 * H, 0, DAY + 4 * H)]
SESSIONS.append((2 * DAY + 10 * H, 0, 2 * DAY + 11 * H))
EXPECTED = [  # (start, end) from MONDAY: A = logout..login, B/C = split by reboots
    (3 * H, 10 * H),  # reboot Monday 03:00 until the first login (case B)
    (11 * H, 14 * H),  # case A
    (15 * H, DAY + 2 * H),  # Monday's logout until Tuesday's login (no reboot in between)
    (DAY + 4 * H, 2 * DAY + 3 * H),  # logout until Wednesday's reboot (case B)
    (2 * DAY + 3 * H, 2 * DAY + 10 * H),  # reboot until login (case C continues)
]


def _replayed_history() -> MachineHistory:
    tr = trace(inventory(1), SESSIONS, days=3)
    _, events = run_recorded(tr)
    policy = IdleAvgPolicy(PolicyContext(machine_infos(tr)))
    for event in events:
        policy.observe(event)
    return policy.histories["pc0"]


def _as_offsets(history: MachineHistory) -> list[tuple[float, float]]:
    p = idle_periods(history, MONDAY + 3 * DAY)
    return [(a - MONDAY, b - MONDAY) for a, b in zip(p.start, p.end, strict=True)]


def test_reboots_split_idle_periods_as_the_replay_reports_them() -> None:
    history = _replayed_history()
    assert _as_offsets(history) == EXPECTED
    active = idle_periods(history, MONDAY + 3 * DAY).active
    assert active.tolist() == [0.0, H, H, 2 * H, 0.0]  # zero-length synthetic user at reboots


def test_history_from_trace_matches_the_replay() -> None:
    logins = np.array([MONDAY + a for a, _, _ in SESSIONS])
    logouts = np.array([MONDAY + b for _, _, b in SESSIONS])
    direct = history_from_sessions(logins, logouts, MONDAY, MONDAY + 3 * DAY, 3.0)
    assert _as_offsets(direct) == EXPECTED
    assert list(direct.reboots) == list(_replayed_history().reboots)


def test_a_machine_no_owner_used_reboots_every_day() -> None:
    # a room nobody entered in the window (a closed lab, a short trace) once raised IndexError
    none = np.empty(0)
    history = history_from_sessions(none, none, MONDAY, MONDAY + 3 * DAY, 3.0)
    assert [t - MONDAY for t in history.reboots] == [3 * H, DAY + 3 * H, 2 * DAY + 3 * H]


def test_open_period_has_no_target_yet() -> None:
    history = _replayed_history()
    cut = MONDAY + 2 * DAY + 5 * H  # Wednesday's 03:00 period is still running
    ends = idle_periods(history, cut).end
    assert ends.max() <= cut and len(ends) == 4


def test_synthetic_samples_every_delta_with_remaining_idle_as_target() -> None:
    history = MachineHistory()
    history.login(0.0)
    history.logout(100.0)
    history.login(100.0 + 25 * 60)  # a 25-minute idle period
    rng = np.random.default_rng(0)
    x, y = training_samples(
        history, 1e6, (0.0, 0.0), Calendar.of([]), ("activeDuration",), 600.0, 100, rng
    )
    assert y.tolist() == [1500.0, 900.0, 300.0]  # i, i - delta, i - 2 delta
    assert np.allclose(x[:, 0], 100.0 / DAY)
    periods = idle_periods(history, 1e6)
    _, times = sample_times(periods, 600.0, 2, np.random.default_rng(1))
    assert len(set(times.tolist())) == 2 and set(times.tolist()) <= {100.0, 700.0, 1300.0}


def test_features_are_scaled_and_term_aware() -> None:
    t = MONDAY + 7 * DAY + 13 * H + 30 * 60  # Monday 11 January 2010, 13:30, week 1 of term 1
    cal = Calendar.of([(MONDAY + 7 * DAY, MONDAY + 70 * DAY)])
    row = feature_matrix(
        np.array([t]), np.array([t - H]), np.array([2 * H]), (0.5, 1.0), cal, FEATURES
    )[0]
    values = dict(zip(FEATURES, row.tolist(), strict=True))
    assert values["hourOfDay"] == pytest.approx(13 / 23)
    assert values["minute"] == pytest.approx(30 / 59)
    assert values["dayOfWeek"] == 0.0 and values["dayOfMonth"] == pytest.approx(10 / 30)
    assert values["month"] == 0.0 and values["termWeeks"] == pytest.approx(1 / 13)
    assert values["term"] == pytest.approx(1 / 3)
    assert values["activeDuration"] == pytest.approx(2 / 24)
    assert values["cluster"] == 0.5 and values["machine"] == 1.0
    assert all(-1.0 <= v <= 1.0 for v in row)
    outside = feature_matrix(
        np.array([MONDAY]), np.array([MONDAY]), np.zeros(1), (0, 0), cal, FEATURES
    )
    assert outside[0, FEATURES.index("term")] < 0 and outside[0, FEATURES.index("termWeeks")] < 0


def test_no_feature_uses_information_after_the_sample_time() -> None:
    """Each training row must equal the row computed at its time from the past alone."""
    rng = np.random.default_rng(7)
    logins = MONDAY + np.sort(rng.uniform(0, 20 * DAY, 40))
    logouts = logins + rng.uniform(600, 3 * H, 40)
    until = MONDAY + 21 * DAY
    full = history_from_sessions(logins, logouts, MONDAY, until, 3.0)
    periods = idle_periods(full, until)
    cal = Calendar.of([(MONDAY + 5 * DAY, MONDAY + 15 * DAY)])
    picked, times = sample_times(periods, 600.0, 60, np.random.default_rng(3))
    rows = feature_matrix(
        times, periods.start[picked], periods.active[picked], (0.2, 0.4), cal, FEATURES
    )
    for row, t in zip(rows, times, strict=True):
        past = history_from_sessions(logins, logouts, MONDAY, float(np.nextafter(t, np.inf)), 3.0)
        now = features_now(past, float(t), MONDAY, (0.2, 0.4), cal, FEATURES)
        assert np.array_equal(row, now), f"training row at {t} differs from what was known then"
