"""A replay as a pool where the daemon does not edit jobs (``PoolRules(job_edits=False)``,
``replay --no-job-edits``; live ``pool.edit_jobs: false``, as when the key is left out): no
per-job advice reaches the queue, and a job's class is its last attempt's hours, as the shipped
``ADVISOR_PRIOR_HOURS`` reads ``LastRemoteWallClockTime`` without the ``AdvisorPriorHours`` edit."""

from __future__ import annotations

import pytest
from test_job_needs_hours import ClassedSecondJob
from tracekit import H, Recorder, inventory, trace

from plugins.contract.policy import PolicyContext
from simulator.campus.replay import machine_infos, replay
from simulator.campus.rules import PoolRules
from simulator.trace_model import OpeningHours

NEVER_OPEN = OpeningHours((None,) * 7)


@pytest.mark.parametrize(("job_edits", "second_on"), [(True, "pc1"), (False, "pc0")])
def test_without_job_edits_a_jobs_advice_does_not_reach_the_queue(
    job_edits: bool, second_on: str
) -> None:
    # the second job is advised to need 5 hours, which ranks pc1 first; unedited, it stays class 0
    tr = trace(inventory(2, NEVER_OPEN), jobs=[(0.1 * H, H, 9 * H), (2 * H, H, 9 * H)], days=0.5)
    policy = ClassedSecondJob(PolicyContext(machine_infos(tr), seed=0), 5)
    book = replay(tr, policy, seed=0, rules=PoolRules(job_edits=job_edits)).book
    assert [book.machine_names[m] for m in book.machine[:2]] == ["pc0", second_on]


@pytest.mark.parametrize(("job_edits", "queued_as"), [(True, 2), (False, 0)])
def test_without_job_edits_a_job_is_classed_by_its_last_attempt(
    job_edits: bool, queued_as: int
) -> None:
    # one machine: the job runs 2 hours until its owner comes, then under an hour until the 03:00
    # reboot, then minutes until the owner is back for the rest of the day; it waits, classed by
    # its longest attempt or by its last
    tr = trace(
        inventory(1, NEVER_OPEN),
        sessions=[(2.1 * H, 0, 2.2 * H), (3.2 * H, 0, 12 * H)],
        jobs=[(0.1 * H, 10 * H, 20 * H)],
        days=0.5,
    )
    policy = Recorder(PolicyContext(machine_infos(tr), seed=0))
    book = replay(tr, policy, seed=0, rules=PoolRules(job_edits=job_edits)).book
    assert book.attempts[0] == 3
    assert book.class_attempt_s[0] < H if not job_edits else book.class_attempt_s[0] >= 2 * H
    assert book.prior_class[0] == queued_as
