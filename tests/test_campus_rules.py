"""The campus pool rules (docs/architecture.md section 4), each on a hand-made trace whose answer
is known."""

from __future__ import annotations

import pytest
from tracekit import MONDAY, OFFICE, H, inventory, run_recorded, trace

from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    MachinePowerChanged,
    PowerState,
)
from simulator.trace_model import OpeningHours

INF = float("inf")


def attempts(events):
    return [e for e in events if isinstance(e, AttemptEnded)]


def test_reboot_at_three_evicts_and_job_restarts_after() -> None:
    # Submitted at 01:00 with 4 h to run: the 03:00 reboot evicts it; it restarts and completes.
    result, events = run_recorded(trace(inventory(), jobs=[(1 * H, 4 * H, INF)]))
    ended = attempts(events)
    assert [e.outcome for e in ended] == [AttemptOutcome.EVICTED_REBOOT, AttemptOutcome.COMPLETED]
    assert ended[0].time == MONDAY + 3 * H
    assert result.book.evictions == {"owner": 0, "reboot": 1}
    assert ended[1].time - ended[1].started == pytest.approx(4 * H)


def test_reboot_is_cancelled_under_a_logged_in_owner() -> None:
    # The owner is logged in across 03:00, so no reboot event is emitted for that machine.
    tr = trace(inventory(hours=OpeningHours.always()), sessions=[(2 * H, 0, 4 * H)])
    _, events = run_recorded(tr)
    reboots = [
        e for e in events if isinstance(e, MachinePowerChanged) and e.state is PowerState.REBOOTED
    ]
    assert all(e.time != MONDAY + 3 * H for e in reboots)


def test_owner_login_evicts_at_once_and_the_attempt_is_wasted() -> None:
    # Job starts at 10:00 (open hours, no owner yet); owner logs in at 11:00.
    tr = trace(inventory(), sessions=[(11 * H, 0, 12 * H)], jobs=[(10 * H, 2 * H, INF)])
    result, events = run_recorded(tr)
    first = attempts(events)[0]
    assert first.outcome is AttemptOutcome.EVICTED_OWNER
    assert first.time == MONDAY + 11 * H
    wasted_wh = (first.time - first.started) * 57.0 / 3600
    assert result.book.wasted_wh[0] == pytest.approx(wasted_wh)
    assert result.book.good_wh[0] == pytest.approx(2 * H * 57.0 / 3600)  # the rerun completed


def test_job_waits_fifteen_minutes_after_owner_leaves_in_open_hours() -> None:
    tr = trace(inventory(), sessions=[(9 * H, 0, 10 * H)], jobs=[(9.5 * H, 0.5 * H, INF)])
    _, events = run_recorded(tr)
    start = next(e for e in events if isinstance(e, AttemptStarted))
    assert start.time == MONDAY + 10 * H + 15 * 60


def test_job_starts_at_once_after_owner_leaves_outside_open_hours() -> None:
    tr = trace(inventory(), sessions=[(18 * H, 0, 19 * H)], jobs=[(18.5 * H, 0.5 * H, INF)])
    _, events = run_recorded(tr)
    start = next(e for e in events if isinstance(e, AttemptStarted))
    assert start.time == MONDAY + 19 * H


@pytest.mark.parametrize(("logout_h", "sleep_after_s"), [(10.0, 3600.0), (19.0, 900.0)])
def test_idle_machine_sleeps_after_60_min_open_and_15_min_closed(
    logout_h: float, sleep_after_s: float
) -> None:
    tr = trace(inventory(), sessions=[(logout_h * H - 600, 0, logout_h * H)])
    _, events = run_recorded(tr)
    sleeps = [
        e.time for e in events if isinstance(e, MachinePowerChanged) and e.state is PowerState.SLEEP
    ]
    assert MONDAY + logout_h * H + sleep_after_s in sleeps


def test_sleeping_machine_is_woken_for_a_job() -> None:
    tr = trace(inventory(), jobs=[(20 * H, 1 * H, INF)])
    _result, events = run_recorded(tr)
    assert attempts(events)[0].outcome is AttemptOutcome.COMPLETED
    wake = [e for e in events if isinstance(e, MachinePowerChanged) and e.state is PowerState.ON]
    assert wake and wake[0].time == MONDAY + 20 * H


def test_never_finishing_job_is_retried_until_removed_and_all_of_it_is_wasted() -> None:
    tr = trace(inventory(), jobs=[(4 * H, INF, 30 * H)], days=2)
    result, events = run_recorded(tr)
    ended = attempts(events)
    assert [e.outcome for e in ended] == [AttemptOutcome.EVICTED_REBOOT, AttemptOutcome.REMOVED]
    assert ended[1].time == MONDAY + 30 * H
    assert result.book.good_wh[0] == 0
    assert result.book.wasted_wh[0] == pytest.approx(26 * H * 57 / 3600, rel=1e-9)
    assert result.book.status[0] == 4  # REMOVED


def test_removal_of_a_queued_job_keeps_it_off_the_pool() -> None:
    tr = trace(inventory(), sessions=[(9 * H, 0, 16 * H)], jobs=[(10 * H, INF, 12 * H)])
    result, events = run_recorded(tr)
    assert attempts(events) == []
    assert result.book.status[0] == 4


def test_office_hours_fixture_is_weekday_nine_to_five() -> None:
    assert OFFICE.is_open(MONDAY + 9 * H) and not OFFICE.is_open(MONDAY + 17 * H)
    assert not OFFICE.is_open(MONDAY + 5 * 86400 + 10 * H)  # Saturday
