"""What the schedds and a job event log both report passes once, and nothing else is dropped
(the real pool's test, tests/integration/test_real_pool_removals.py, has both sources live)."""

from __future__ import annotations

from advisor.condor.reported_once import ReportedOnce
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
)

T = 1_700_000_000.0
OWNER, DONE = AttemptOutcome.EVICTED_OWNER, AttemptOutcome.COMPLETED


def attempt(job: str, start: float, end: float, outcome: AttemptOutcome) -> list[Event]:
    return [AttemptStarted(start, job, "pc1"), AttemptEnded(end, job, "pc1", outcome, start, 60.0)]


def test_a_start_dated_later_by_the_log_and_an_end_a_second_apart_are_one_attempt() -> None:
    once = ReportedOnce()
    schedd = [JobQueued(T, "1.0", "ann"), *attempt("1.0", T + 30, T + 300, DONE)]
    logged = [JobQueued(T + 1, "1.0", "ann"), *attempt("1.0", T + 75, T + 301, DONE)]
    assert once.fresh(schedd, "schedd") == schedd
    assert once.fresh(logged, "event log") == []


def test_the_log_first_then_the_schedd_a_poll_later() -> None:
    once = ReportedOnce()
    logged = attempt("1.0", T + 40, T + 300, OWNER) + attempt("1.0", T + 340, T + 900, DONE)
    assert once.fresh(logged, "event log") == logged
    schedd = attempt("1.0", T + 38, T + 299, OWNER) + attempt("1.0", T + 335, T + 900, DONE)
    assert once.fresh(schedd, "schedd") == []


def test_a_restart_within_a_minute_of_an_eviction_is_a_second_attempt() -> None:
    once = ReportedOnce()
    first, second = attempt("1.0", T, T + 100, OWNER), attempt("1.0", T + 130, T + 400, DONE)
    assert once.fresh(first[:1], "schedd") == first[:1]
    assert once.fresh(first + second[:1], "event log") == [first[1], second[0]]
    assert once.fresh(first[1:] + second, "schedd") == [second[1]]
    assert once.fresh(second[1:], "event log") == []


def test_one_source_s_own_reports_are_never_merged() -> None:
    """The schedd's epoch ad of an attempt may come after the next start is seen in the queue;
    a job only one source knows is reported as without the other."""
    once = ReportedOnce()
    reports: list[Event] = [
        AttemptStarted(T, "1.0", "pc1"),
        AttemptStarted(T + 130, "1.0", "pc2"),
        AttemptEnded(T + 100, "1.0", "pc1", OWNER, T, 60.0),
        AttemptEnded(T + 400, "1.0", "pc2", DONE, T + 130, 60.0),
        JobQueued(T + 500, "2.0", "bob"),
        JobQueued(T + 520, "2.0", "bob", 1),
    ]
    assert once.fresh(reports, "schedd") == reports
    logged = attempt("1.0", T + 2, T + 101, OWNER) + attempt("1.0", T + 131, T + 401, DONE)
    assert once.fresh(logged, "event log") == []


def test_a_requeue_the_log_does_not_report_and_a_removal_pass_once() -> None:
    once = ReportedOnce()
    schedd: list[Event] = [JobQueued(T, "3.0", "cy"), JobQueued(T + 900, "3.0", "cy", 1)]
    assert once.fresh(schedd, "schedd") == schedd
    assert once.fresh([JobQueued(T, "3.0", "cy"), JobRemoved(T + 950, "3.0")], "event log") == [
        JobRemoved(T + 950, "3.0")
    ]
    assert once.fresh([JobRemoved(T + 951, "3.0")], "schedd") == []


def test_jobs_not_reported_for_a_day_are_forgotten() -> None:
    once = ReportedOnce()
    once.fresh(attempt("1.0", T, T + 100, DONE), "schedd")
    once.fresh(attempt("2.0", T + 90_000, T + 90_100, DONE), "schedd")
    once.forget()
    assert list(once.jobs) == ["2.0"]
