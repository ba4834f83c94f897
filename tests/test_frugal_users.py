"""``frugal`` 8 ranks a new job in the class of the hours nearly all its user's recent jobs needed,
so that it starts where owners stay away that long; never in a class most machines keep off now,
so the class guides where the job starts, not whether."""

from __future__ import annotations

import heapq
import json
from pathlib import Path

import numpy as np
import pytest
from test_frugal_suspects import MACHINES, jobs_advised
from tracekit import MONDAY, H

from plugins.contract.advice import PRIOR_HOURS_CLASSES, JobAdvice
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    JobQueued,
    JobRemoved,
)
from plugins.contract.policy import PolicyContext
from plugins.frugal.policy import FrugalPolicy
from plugins.frugal.user_runtimes import KEEP, MIN_SEEN, UserRuntimes
from simulator.traces import read_swf

NOON = MONDAY + 2 * 24 * H + 12 * H
"""Wednesday noon: 15 hours to the 03:00 reboot."""


def completed(policy: FrugalPolicy, user: str, hours: list[float], at: float) -> None:
    """Jobs of ``user`` queued and completed after running ``hours``, ending at ``at``."""
    for i, ran in enumerate(hours):
        job = f"{100 + i}.0"
        policy.observe(JobQueued(at - ran * H - 60, job, user))
        policy.observe(AttemptEnded(at, job, "pc", AttemptOutcome.COMPLETED, at - ran * H))


def frugal(**options: str) -> FrugalPolicy:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1), options)
    completed(policy, "bob", [5.5 + 0.1 * i for i in range(MIN_SEEN)], NOON - 3 * H)
    jobs_advised(policy, NOON - H)  # the hour's rows
    return policy


def test_a_users_new_job_is_ranked_in_the_class_its_earlier_jobs_needed() -> None:
    policy = frugal()
    policy.observe(JobQueued(NOON, "7.0", "bob"))
    policy.observe(JobQueued(NOON, "8.0", "carol"))  # no runtimes seen: class 0
    policy.observe(JobQueued(NOON, "7.1", "bob", prior_attempts=1))  # ran before: its own class
    assert jobs_advised(policy, NOON + 60) == {"7.0": JobAdvice(needs_hours=5)}


def test_too_few_runtimes_say_nothing() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    completed(policy, "bob", [8.0] * (MIN_SEEN - 1), NOON - 9 * H)
    jobs_advised(policy, NOON - H)
    policy.observe(JobQueued(NOON, "7.0", "bob"))
    assert jobs_advised(policy, NOON + 60) == {}


def test_a_class_kept_off_now_is_lowered_to_one_ranked() -> None:
    """At 23:00 the reboot comes in 4 hours: a start of class 3 to 5 would surely be cut short
    (their completed jobs ran 5.5 hours or more), one of class 2 would not (half of its completed
    jobs ran 2.5 hours). Since frugal 13 the job also waits for the reboot, which its user's jobs
    would not survive (test_frugal_reboot_wait.py); the class it is given is that of frugal 12."""
    policy = frugal(reboot_wait="off")
    late = NOON + 11 * H
    policy.observe(JobQueued(late - 4 * H, "6.0", "carol"))
    for i in range(MIN_SEEN):
        job = f"6.{i}"
        policy.observe(AttemptEnded(late - H, job, "pc", AttemptOutcome.COMPLETED, late - 3.5 * H))
    jobs_advised(policy, late)
    policy.observe(JobQueued(late + 60, "7.0", "bob"))
    assert jobs_advised(policy, late + 120) == {"7.0": JobAdvice(needs_hours=2)}


def test_user_quantile_0_is_frugal_7() -> None:
    policy = frugal(user_quantile="0")
    policy.observe(JobQueued(NOON, "7.0", "bob"))
    assert jobs_advised(policy, NOON + 60) == {}


def test_the_quantile_is_of_the_latest_runtimes_and_survives_a_restart() -> None:
    users, every_class = UserRuntimes(), np.ones(PRIOR_HOURS_CLASSES)
    for i in range(KEEP + 5):
        users.queued(f"{i}.0", "bob", 0, every_class)
        users.completed(f"{i}.0", (1.0 if i < 5 else 4.5) * H)  # the first five are forgotten
        if i == MIN_SEEN - 1:
            assert users.surely_needs_hours("bob", 0.1) == 1  # (then each completion counts)
    users.queued("99.0", "bob", 0, every_class)
    users.left("99.0")
    users.completed("99.0", 0.1 * H)  # removed before: not counted
    assert users.queued("100.0", "bob", 4, every_class) == 4
    restored = UserRuntimes()
    restored.load_state(json.loads(json.dumps(users.state_dict())))
    assert restored.surely_needs_hours("bob", 0.1) == users.surely_needs_hours("bob", 0.1) == 4
    assert restored.surely_needs_hours("carol", 0.1) == 0
    assert restored.waiting == {"100.0": (4, 4)}


def test_a_waiting_job_follows_the_classes_the_machines_rank() -> None:
    """Ranked in class 5 at noon, a job still queued when class 5 is kept off everywhere would
    wait for hours: it is lowered to the highest class ranked, and raised again later."""
    policy = frugal()
    policy.observe(JobQueued(NOON, "7.0", "bob"))
    policy.observe(JobQueued(NOON, "8.0", "bob"))
    assert jobs_advised(policy, NOON + 60) == {
        "7.0": JobAdvice(needs_hours=5),
        "8.0": JobAdvice(needs_hours=5),
    }
    policy.observe(AttemptStarted(NOON + 90, "8.0", "pc"))  # started: its class is spent
    late = NOON + 11 * H  # 23:00: bob's 5.5 hours do not fit before the reboot
    assert jobs_advised(policy, late) == {"7.0": JobAdvice(needs_hours=0)}
    assert jobs_advised(policy, late + 5 * H) == {"7.0": JobAdvice(needs_hours=5)}


def test_a_job_removed_or_completed_is_forgotten() -> None:
    policy = frugal()
    policy.observe(JobQueued(NOON, "7.0", "bob"))
    policy.observe(JobRemoved(NOON + 60, "7.0"))
    assert policy.users.user_of == {}


@pytest.mark.realdata
def test_on_a_real_grid_log_a_users_runtimes_tell_which_new_jobs_run_hours(
    shared_data: Path,
) -> None:
    """LCG, 11 days, 188,041 jobs: a job starts once its user's jobs that ended before its
    submission are known (runtimes ended at submission + wait + run). Of all jobs, 26.8% ran an
    hour or more; of those the user quantile classes (class 1 or more), nearly four in five ran
    at least their class: what a class promises, the user's runtimes keep."""
    log = read_swf(shared_data / "b_workloads" / "LCG-2005-1" / "LCG-2005-1.swf.gz")
    known = log.run > 0
    submit, run, user = log.submit[known], log.run[known], log.user[known].astype(str)
    ends = submit + np.maximum(log.wait[known], 0) + run
    users, every_class = UserRuntimes(), np.ones(PRIOR_HOURS_CLASSES)
    ended: list[tuple[float, str, float]] = []  # a heap of (end, job, runtime)
    classes = np.zeros(len(run), dtype=int)
    for i in np.argsort(submit, kind="stable"):
        while ended and ended[0][0] <= submit[i]:
            _, job, ran = heapq.heappop(ended)
            users.completed(job, ran)
        needs = min(users.surely_needs_hours(user[i], 0.1), PRIOR_HOURS_CLASSES - 1)
        classes[i] = users.queued(str(i), user[i], needs, every_class)
        heapq.heappush(ended, (ends[i], str(i), run[i]))
    classed = classes > 0
    assert round(float((run >= H).mean()), 3) == 0.268
    assert classed.mean() > 0.1
    assert (run[classed] >= classes[classed] * H).mean() > 0.75
