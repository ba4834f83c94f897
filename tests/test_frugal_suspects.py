"""``frugal`` 4 keeps a suspected never-finisher off every machine after each eviction: a job one of
whose attempts ran longer than any of at least MIN_COMPLETED completed jobs needed, of a batch
with no completed job; once per eviction, for ``keep_off_hours``, and never with it at 0.
``frugal`` 9 keeps one off only once until TRUSTED_BATCHES batches completed a job.
``frugal`` 6 then starts the classes of such jobs where an attempt is stopped soonest."""

from __future__ import annotations

import json

import numpy as np
from tracekit import MONDAY, H

from plugins.contract.advice import JobAdvice
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    OwnerSessionEnded,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineInfo, MachineView, PolicyContext, PoolView
from plugins.frugal.cut_short import ATTEMPT_GRID_H, attempt_hours
from plugins.frugal.policy import HELD, FrugalPolicy
from plugins.frugal.suspects import MIN_COMPLETED, TRUSTED_BATCHES, NeverFinisherSuspects

MACHINES = {"pc": MachineInfo("pc", "room", "Normal", 57.0, 40.0, 2.0)}
EVICTED, COMPLETED = AttemptOutcome.EVICTED_OWNER, AttemptOutcome.COMPLETED


def seen_completing(
    policy: FrugalPolicy,
    jobs: int = MIN_COMPLETED,
    hours: float = 5.0,
    batches: int = TRUSTED_BATCHES,
) -> None:
    """``jobs`` good jobs of ``batches`` batches (batch 1 and batches from 1001) completed, the
    longest in ``hours``."""
    for i in range(jobs):
        ran = hours * H if i == 0 else H
        batch = 1 if i % batches == 0 else 1000 + i % batches
        policy.observe(AttemptEnded(MONDAY + ran, f"{batch}.{i}", "pc", COMPLETED, MONDAY))


def jobs_advised(policy: FrugalPolicy, now: float) -> dict[str, JobAdvice]:
    view = PoolView([MachineView("pc", "idle", now - H)], [1] + [0] * 23)
    return policy.advise(view, now).jobs


def evict(policy: FrugalPolicy, job: str, ran_h: float, at: float) -> None:
    policy.observe(AttemptEnded(at, job, "pc", EVICTED, at - ran_h * H))


def test_a_job_that_ran_longer_than_any_completed_job_is_kept_off_after_its_eviction() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    seen_completing(policy)
    at = MONDAY + 2 * 24 * H
    evict(policy, "2.0", 6.0, at)  # longer than the 5 h any completed job needed
    evict(policy, "3.0", 4.0, at)  # shorter: a good job may need that
    assert jobs_advised(policy, at + 60) == {"2.0": JobAdvice(hold_until=at + 23 * H)}
    assert jobs_advised(policy, at + 120) == {}  # sent once per eviction
    evict(policy, "2.0", 1.0, at + 30 * H)  # its longest attempt still says so
    assert jobs_advised(policy, at + 31 * H) == {"2.0": JobAdvice(hold_until=at + 53 * H)}


def test_a_completed_job_of_its_batch_or_too_few_completions_clear_it() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    seen_completing(policy, MIN_COMPLETED - 1)
    at = MONDAY + 2 * 24 * H
    evict(policy, "2.0", 6.0, at)
    assert jobs_advised(policy, at + 60) == {}  # the longest of 99 is not trusted yet
    seen_completing(policy, MIN_COMPLETED)
    evict(policy, "1.500", 6.0, at)  # batch 1 has completed jobs
    assert jobs_advised(policy, at + 60) == {}


def test_before_enough_batches_completed_a_suspect_is_kept_off_only_once() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    seen_completing(policy, batches=3)  # 100 jobs, but of three batches: the longest may mislead
    at = MONDAY + 2 * 24 * H
    evict(policy, "2.0", 6.0, at)
    assert jobs_advised(policy, at + 60) == {"2.0": JobAdvice(hold_until=at + 23 * H)}
    evict(policy, "2.0", 1.0, at + 30 * H)
    assert jobs_advised(policy, at + 31 * H) == {}  # a good job misjudged waits one keep-off
    evict(policy, "3.0", 6.0, at + 30 * H)  # another suspect: its first keep-off
    assert jobs_advised(policy, at + 31 * H + 60) == {"3.0": JobAdvice(hold_until=at + 53 * H)}
    restored = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    restored.load_state(json.loads(json.dumps(policy.state_dict())))
    seen_completing(restored)  # now 100 batches: the longest is trusted, again and again
    evict(restored, "2.0", 1.0, at + 60 * H)
    assert jobs_advised(restored, at + 61 * H) == {"2.0": JobAdvice(hold_until=at + 83 * H)}


def test_keep_off_hours_0_is_frugal_3() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1), {"keep_off_hours": 0.0})
    seen_completing(policy)
    evict(policy, "2.0", 6.0, MONDAY + 2 * 24 * H)
    assert jobs_advised(policy, MONDAY + 2 * 24 * H + 60) == {}


def test_what_it_suspects_survives_a_restart_and_old_batches_are_forgotten() -> None:
    suspects = NeverFinisherSuspects()
    for i in range(2000):  # one batch each, a day apart: the pruning keeps the last 30 days
        suspects.completed(f"{i}.0", H, MONDAY + i * 24 * H)
    assert len(suspects.batches_done) < 1100 and "1999" in suspects.batches_done
    restored = NeverFinisherSuspects()
    restored.load_state(json.loads(json.dumps(suspects.state_dict())))
    for job in ("1999.3", "5.0", "77777.0"):
        assert restored.suspected(job, 2 * H) == suspects.suspected(job, 2 * H)
    assert not restored.suspected("1999.3", 2 * H) and restored.suspected("77777.0", 2 * H)


TWO_ROOMS = {
    "busy": MachineInfo("busy", "busy", "Normal", 57.0, 40.0, 2.0),
    "quiet": MachineInfo("quiet", "quiet", "Normal", 57.0, 40.0, 2.0),
}


def ranks_after_weeks_of_owners_at_ten(
    options: dict[str, str],
    completed: int = MIN_COMPLETED,
    hour: float = 9.5,
    longest_h: float = 5.0,
) -> dict[str, tuple[float, ...]]:
    """Ranks on the fourth Monday at ``hour`` after owners took the ``busy`` room's machine at
    10:00 on every weekday and ``completed`` jobs completed, the longest in ``longest_h``."""
    policy = FrugalPolicy(PolicyContext(TWO_ROOMS, seed=1), options)
    for day in (d for d in range(21) if d % 7 < 5):
        policy.observe(OwnerSessionStarted(MONDAY + day * 24 * H + 10 * H, "busy"))
        policy.observe(OwnerSessionEnded(MONDAY + day * 24 * H + 11 * H, "busy"))
    for i in range(completed):
        ran = longest_h * H if i == 0 else H
        policy.observe(AttemptEnded(MONDAY + ran, f"1.{i}", "quiet", COMPLETED, MONDAY))
    now = MONDAY + 21 * 24 * H + hour * H
    view = PoolView([MachineView(m, "idle", now - H) for m in TWO_ROOMS], [1] + [0] * 23)
    advice = policy.advise(view, now)
    return {m: advice.shared[name].rank_by_prior_hours or () for m, name in advice.follows.items()}


def test_jobs_that_ran_23_hours_go_where_owners_stop_them_soonest_and_no_other_class_does() -> None:
    ranks = ranks_after_weeks_of_owners_at_ten({})  # Monday 09:30: owners come to busy at 10
    assert ranks["busy"][23] > ranks["quiet"][23] > 0
    assert ranks["busy"][5] < ranks["quiet"][5]  # longer than any completed: still as frugal 5
    assert ranks["busy"][22] == ranks["quiet"][22] == HELD  # the reboot rule holds 22 h
    for unchanged in (
        ranks_after_weeks_of_owners_at_ten({"cut_short": "off"}),  # frugal 5
        ranks_after_weeks_of_owners_at_ten({}, MIN_COMPLETED - 1),  # 5 h not trusted yet
        ranks_after_weeks_of_owners_at_ten({}, longest_h=23.5),  # a job completed in 23.5 h
    ):
        assert unchanged["busy"][23] == unchanged["quiet"][23] == HELD


def test_the_reboot_rule_does_not_keep_them_for_the_longest_run_after_it() -> None:
    ranks = ranks_after_weeks_of_owners_at_ten({}, hour=23.0)  # the reboot is 4 hours away
    assert all(r == HELD for r in ranks["quiet"][4:23])  # 4 h or more cannot finish before it
    assert ranks["quiet"][23] > 0  # a never-finisher started now is stopped by it within 4 h


def test_an_attempt_runs_until_an_owner_or_the_reboot_stops_it() -> None:
    nobody, sure = np.zeros((1, len(ATTEMPT_GRID_H))), np.ones((1, len(ATTEMPT_GRID_H)))
    assert attempt_hours(nobody, to_reboot_h=4.0)[0] == 4.0
    assert attempt_hours(sure, to_reboot_h=20.0)[0] == 0.0
    half_life_2h = 1.0 - 0.5 ** (ATTEMPT_GRID_H[None, :] / 2.0)
    assert 2.0 < attempt_hours(half_life_2h, to_reboot_h=24.0)[0] < 3.0  # 2 / ln 2 = 2.89
