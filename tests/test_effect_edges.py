"""The report's estimate on a young daemon or a small pool: a resample in which an arm has no
completed job defines none of its figures and is left out (it is not a ratio of 0), and an arm
whose completed jobs' waits are all unknown is a one-line answer, not a traceback."""

from __future__ import annotations

import pytest

from advisor.daemon.effect import DAY, Sample, estimate, resample

T0 = 1_700_000_000.0


def day_of_jobs(arm: str, day: int, machine: str, done: bool, n: int = 1) -> list[Sample]:
    submit = T0 + day * DAY
    return [(arm, 10.0, done, 60.0 if done else None, machine, submit)] * n


def test_a_resample_without_a_completed_control_job_is_left_out_not_counted_as_zero() -> None:
    # control: a completed job on one day and machine, an unfinished one's energy on another
    control = day_of_jobs("control", 0, "c1", True) + day_of_jobs("control", 1, "c2", False)
    treated = [s for d in (0, 1) for s in day_of_jobs("treated", d, f"t{d}", True, 5)]
    drawn = resample(control + treated, resamples=400, seed=3)
    energy, overhead = drawn.ratios
    assert len(energy) < 400  # the draws that took only the unfinished control job
    assert energy.min() > 0  # none of them counted as a ratio of 0
    assert len(overhead) == len(energy) and overhead.min() > 0


def test_an_arm_whose_completed_jobs_have_no_known_wait_is_said_in_one_line() -> None:
    treated = day_of_jobs("treated", 0, "t1", True, 4)
    unseen: list[Sample] = [("control", 10.0, True, None, "c1", None)]  # submission unseen
    with pytest.raises(ValueError, match=r"^no completed job in the control arm whose submission"):
        estimate(treated + unseen)
