"""The daemon's control group: per-arm accounting of a constructed event sequence, the guard's
on/off hysteresis, the config keys' located errors, the report from a snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from advisor.daemon.arms import ArmBook
from advisor.daemon.config import check_config
from advisor.daemon.control_group import ControlGroup, welch_z
from advisor.daemon.fields import ConfigError
from advisor.daemon.metrics import DaemonMetrics
from plugins.contract.control import CONTROL, TREATED, arm_of
from plugins.contract.events import AttemptEnded, AttemptOutcome, Event, JobQueued, JobRemoved

H = 3600.0
PERCENT = 10
C_IDS = [f"{c}.0" for c in range(1, 2000) if arm_of(f"{c}.0", PERCENT) == CONTROL]
T_IDS = [f"{c}.0" for c in range(1, 2000) if arm_of(f"{c}.0", PERCENT) == TREATED]
SETTINGS = {
    "percent": PERCENT,
    "guard": True,
    "guard_margin": 0.1,
    "guard_confidence": 0.95,
    "guard_window": 10 * H,
    "guard_min_jobs": 5,
    "keep": 100 * H,
}


def test_per_arm_accounting_of_a_constructed_sequence() -> None:
    book = ArmBook(PERCENT, keep_s=100 * H)
    c, t, gone = C_IDS[0], T_IDS[0], T_IDS[1]
    events: list[Event] = [
        JobQueued(0.0, c, "alice"),
        JobQueued(0.0, t, "bob"),
        JobQueued(0.0, gone, "bob"),
        # the treated job: evicted after 1 h at 100 W, re-queued, completes 2 h from 3 h on
        AttemptEnded(2 * H, t, "m1", AttemptOutcome.EVICTED_OWNER, 1 * H, 100.0),
        JobQueued(2 * H, t, "bob"),  # a live source says it re-entered the queue
        AttemptEnded(5 * H, t, "m2", AttemptOutcome.COMPLETED, 3 * H, 50.0),
        # the control job: completes at once after 30 min of waiting
        AttemptEnded(1.5 * H, c, "m3", AttemptOutcome.COMPLETED, 0.5 * H, 60.0),
        # a treated job that runs 1 h at 40 W and is removed; then a removal of an unknown job
        AttemptEnded(3 * H, gone, "m4", AttemptOutcome.REMOVED, 2 * H, 40.0),
        JobRemoved(3 * H, "99999.0"),
        AttemptEnded(4 * H, "77.0", "m5", AttemptOutcome.COMPLETED, 3 * H, 10.0),  # seen late
    ]
    for e in events:
        book.observe(e)
    treated, control = book.totals[TREATED], book.totals[CONTROL]
    assert treated["completed"] == 1 + (arm_of("77.0", PERCENT) == TREATED)
    assert treated["removed"] == 1 and treated["evictions"] == 1
    assert treated["wasted_wh"] == pytest.approx(100.0 + 40.0)
    assert treated["wasted_hours"] == pytest.approx(2.0)
    assert control["completed"] == 1 and control["evictions"] == 0 and control["wasted_wh"] == 0
    assert control["energy_wh"] == pytest.approx(60.0)
    assert control["overhead_s"] == pytest.approx(0.5 * H)
    late = 10.0 if arm_of("77.0", PERCENT) == TREATED else 0.0
    assert treated["energy_wh"] == pytest.approx(100.0 + 100.0 + 40.0 + late)
    assert treated["overhead_s"] == pytest.approx(3 * H)  # submit 0, last attempt started at 3 h
    assert treated["overhead_jobs"] == 1  # the job queued before the daemon saw it: no overhead
    assert book.overheads(0.0) == {TREATED: [3 * H], CONTROL: [0.5 * H]}
    assert book.open == {}
    restored = ArmBook(PERCENT, keep_s=100 * H)
    restored.load_state(book.state_dict())
    assert restored.totals == book.totals and list(restored.ended) == list(book.ended)


def complete(group: ControlGroup, job: str, t: float, overhead: float, machine: str = "m") -> None:
    group.book.observe(JobQueued(t - overhead - 600.0, job, "u"))
    group.book.observe(AttemptEnded(t, job, machine, AttemptOutcome.COMPLETED, t - 600.0, 50.0))


def test_the_guard_trips_with_confidence_and_releases_with_hysteresis() -> None:
    group = ControlGroup(SETTINGS, DaemonMetrics(lambda: 0.0))
    treated, control = iter(T_IDS), iter(C_IDS)
    now = 0.0
    for i in range(4):  # too few completions to judge
        now += 60.0
        complete(group, next(treated), now, 5000.0 + 100 * i)
        complete(group, next(control), now, 1000.0 + 100 * i)
    assert group.judge(now) is False and group.z is None
    for i in range(4):  # the treated arm waits five times longer: tripped
        now += 60.0
        complete(group, next(treated), now, 5000.0 + 100 * i)
        complete(group, next(control), now, 1000.0 + 100 * i)
    assert group.judge(now) is True and group.z is not None and group.z > 1.645
    exposition = group_metrics(group)
    assert 'advisor_control_completed{arm="treated"} 8.0' in exposition
    assert "advisor_control_guard_withheld 1.0" in exposition
    # later jobs of both arms alike, 5% apart: inside the margin, but the window still holds
    # the old ones (z > 0): stays withheld (hysteresis), however many cycles ask
    now += 6 * H
    for i in range(6):
        complete(group, next(treated), now, 1050.0 + 100 * i)
        complete(group, next(control), now, 1000.0 + 100 * i)
    assert group.judge(now) is True and group.judge(now) is True
    # the harmful ones leave the window: the estimate is inside the margin, advice resumes
    now += 5 * H
    complete(group, next(treated), now, 1000.0)
    complete(group, next(control), now, 1000.0)
    assert group.judge(now) is False and group.z is not None and group.z <= 0.0
    # a treated arm 8% slower: above nothing, not past the margin with confidence: stays on
    for i in range(30):
        complete(group, next(treated), now, 1080.0 + 100 * (i % 6))
        complete(group, next(control), now, 1000.0 + 100 * (i % 6))
    assert group.judge(now) is False


def test_a_guard_turned_off_after_a_trip_lets_go_of_the_advice() -> None:
    # the administrator sets control.guard: false and restarts: the snapshot says withheld, but
    # nothing withholds any more, and the gauge, the twin and the report say so
    group = ControlGroup(SETTINGS, None)
    treated, control = iter(T_IDS), iter(C_IDS)
    for i in range(8):
        complete(group, next(treated), 60.0 * (i + 1), 5000.0 + 100 * i)
        complete(group, next(control), 60.0 * (i + 1), 1000.0 + 100 * i)
    assert group.judge(480.0) is True
    unguarded = ControlGroup({**SETTINGS, "guard": False}, DaemonMetrics(lambda: 0.0))
    unguarded.load_state(group.state_dict())
    assert unguarded.withheld is True  # as saved
    assert unguarded.judge(540.0) is False and unguarded.withheld is False
    assert "advisor_control_guard_withheld 0.0" in group_metrics(unguarded)


def test_one_slow_machine_does_not_trip_the_guard_that_welch_alone_would_trip() -> None:
    """30 jobs per arm, alike but for three treated jobs that waited 20,000 s on one machine: as
    independent jobs the treated arm is surely slower; drawn machine by machine, one time in three
    that machine is not drawn at all, so the guard cannot say the advice did it."""
    group = ControlGroup(SETTINGS, None)
    treated, control = iter(T_IDS), iter(C_IDS)
    now = 10 * H
    for i in range(30):
        complete(group, next(control), now, 1000.0 + 10 * (i % 7), f"c{i % 5}")
        slow = i < 3  # all on t0
        overhead, machine = (20000.0, "t0") if slow else (1000.0 + 10 * (i % 7), f"t{i % 10}")
        complete(group, next(treated), now, overhead, machine)
    assert group.judge(now) is False
    assert group.z is not None and group.z > 1.645  # Welch alone would have tripped
    assert group.lower is not None and group.lower < 1.1
    # the same excess on every treated machine: both tests agree, advice is withheld
    for i in range(30):
        complete(group, next(treated), now, 6000.0 + 10 * (i % 7), f"t{i % 10}")
    assert group.judge(now) is True and group.lower > 1.1


def group_metrics(group: ControlGroup) -> str:
    metrics = DaemonMetrics(lambda: 0.0)
    group._register(metrics)
    return metrics.exposition().decode()


def test_welch_z() -> None:
    assert welch_z([10.0, 12.0], [10.0, 12.0], 0.0) == 0.0
    assert welch_z([20.0, 22.0], [10.0, 12.0], 0.0) == pytest.approx(
        10 / (2.0 / 2 + 2.0 / 2) ** 0.5
    )
    assert welch_z([11.0, 11.0], [10.0, 10.0], 0.0) == float("inf")


@pytest.mark.parametrize(
    ("control", "where"),
    [
        ({"percent": 150}, "control.percent"),
        ({"percent": "ten"}, "control.percent"),
        ({"guard_margin": -0.1}, "control.guard_margin"),
        ({"guard_confidence": 1.5}, "control.guard_confidence"),
        ({"guard_window": "forever"}, "control.guard_window"),
        ({"guard_min_jobs": 1}, "control.guard_min_jobs"),
        ({"gaurd": True}, "control.gaurd"),
    ],
)
def test_control_keys_are_checked_with_their_path(control: dict[str, Any], where: str) -> None:
    with pytest.raises(ConfigError) as bad:
        check_config({"pool": {"kind": "sim", "scenario": "campus"}, "control": control})
    assert str(bad.value).startswith(where), str(bad.value)


def test_defaults_have_no_control_group() -> None:
    config = check_config({"pool": {"kind": "sim", "scenario": "campus"}})
    assert config.control["percent"] == 0 and config.control["guard"] is True


def test_report_on_a_missing_state_directory_is_one_line(tmp_path: Path, capsys: Any) -> None:
    from advisor.cli import main

    assert main(["report", "--state-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such state directory" in err[0]


def test_a_pool_percent_other_than_the_daemons_is_said() -> None:
    from advisor.condor.factory import control_mismatch

    assert control_mismatch("10", 10) is None and control_mismatch(" 10 ", 10) is None
    assert control_mismatch(None, 0) is None
    assert control_mismatch(None, 10) == "ADVISOR_CONTROL_PERCENT is not set in HTCondor"
    assert control_mismatch("5", 10) == "ADVISOR_CONTROL_PERCENT is 5 in HTCondor"
    assert "not a whole number" in str(control_mismatch("$(X)", 10))


def test_a_new_control_percent_starts_the_arms_anew(caplog: pytest.LogCaptureFixture) -> None:
    # a restart at another percent counted on: the report then mixed the two splits' jobs
    group = ControlGroup(SETTINGS, None)
    complete(group, T_IDS[0], 3 * H, 600.0)
    complete(group, C_IDS[0], 3 * H, 600.0)
    saved = group.state_dict()
    same = ControlGroup(SETTINGS, None)
    same.load_state(saved)
    assert same.book.totals == group.book.totals
    other = ControlGroup({**SETTINGS, "percent": 30}, None)
    with caplog.at_level("WARNING"):
        other.load_state(saved)
    assert all(totals["completed"] == 0 for totals in other.book.totals.values())
    assert "control.percent is now 30%, the saved arms were of a 10% split" in caplog.text
