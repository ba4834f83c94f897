"""``frugal`` 4 keeps a suspected never-finisher off every machine after each eviction: a job one of
whose attempts ran longer than any of at least MIN_COMPLETED completed jobs needed, of a batch
with no completed job; once per eviction, for ``keep_off_hours``, and never with it at 0."""

from __future__ import annotations

import json

from tracekit import MONDAY, H

from plugins.contract.advice import JobAdvice
from plugins.contract.events import AttemptEnded, AttemptOutcome
from plugins.contract.policy import MachineInfo, MachineView, PolicyContext, PoolView
from plugins.frugal.policy import FrugalPolicy
from plugins.frugal.suspects import MIN_COMPLETED, NeverFinisherSuspects

MACHINES = {"pc": MachineInfo("pc", "room", "Normal", 57.0, 40.0, 2.0)}
EVICTED, COMPLETED = AttemptOutcome.EVICTED_OWNER, AttemptOutcome.COMPLETED


def seen_completing(policy: FrugalPolicy, jobs: int = MIN_COMPLETED, hours: float = 5.0) -> None:
    """``jobs`` good jobs of batch 1 completed, the longest in ``hours``."""
    for i in range(jobs):
        ran = hours * H if i == 0 else H
        policy.observe(AttemptEnded(MONDAY + ran, f"1.{i}", "pc", COMPLETED, MONDAY))


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
    assert jobs_advised(policy, at + 60) == {"2.0": JobAdvice(hold_until=at + 24 * H)}
    assert jobs_advised(policy, at + 120) == {}  # sent once per eviction
    evict(policy, "2.0", 1.0, at + 30 * H)  # its longest attempt still says so
    assert jobs_advised(policy, at + 31 * H) == {"2.0": JobAdvice(hold_until=at + 54 * H)}


def test_a_completed_job_of_its_batch_or_too_few_completions_clear_it() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    seen_completing(policy, MIN_COMPLETED - 1)
    at = MONDAY + 2 * 24 * H
    evict(policy, "2.0", 6.0, at)
    assert jobs_advised(policy, at + 60) == {}  # the longest of 99 is not trusted yet
    seen_completing(policy, MIN_COMPLETED)
    evict(policy, "1.500", 6.0, at)  # batch 1 has completed jobs
    assert jobs_advised(policy, at + 60) == {}


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
