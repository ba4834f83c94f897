"""A job idle again after an eviction is reported as the live schedd shows it, and policies learn
the same from the report as without it: the replay and the daemon feed them alike."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_bandit_rewards import two_rooms
from tracekit import MONDAY, H, inventory, run_recorded, trace

from advisor.condor.job_queue import QueueTracker, submitted
from plugins.bandits.placement import ClusterBandit
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, Event, JobQueued
from plugins.contract.policy import MachineView, Policy, PolicyContext, PoolView
from plugins.replicas.policies import ReplicaBandit
from simulator.campus.replay import machine_infos

T0 = MONDAY + 10 * H


def test_the_replay_reports_a_job_idle_again_after_an_eviction_as_the_schedd_does() -> None:
    # One office PC; the job (2 h) starts at 10:00, its owner comes at 10:30 for half an hour.
    tr = trace(inventory(1), [(10.5 * H, 0, 11 * H)], [(10 * H, 2 * H, 23 * H)])
    _, events = run_recorded(tr)
    (evicted,) = [e for e in events if isinstance(e, AttemptEnded) and e.outcome != "completed"]
    first, again = [e for e in events if isinstance(e, JobQueued)]
    assert (first.prior_attempts, first.longest_prior_attempt_s) == (0, 0.0)

    # The daemon's queue tracker, shown the schedd's ads of the same job, reports the same.
    ran = evicted.time - evicted.started
    ad: dict[str, Any] = {"ClusterId": 0, "ProcId": 0, "Owner": "alice", "QDate": first.time}
    tracker = QueueTracker()
    polls: list[dict[str, Any]] = [
        {"JobStatus": 1, "NumJobStarts": 0, "EnteredCurrentStatus": first.time},
        {"JobStatus": 2, "RemoteHost": "slot1@pc0", "JobCurrentStartDate": evicted.started},
        {"JobStatus": 1, "NumJobStarts": 1, "EnteredCurrentStatus": evicted.time}
        | {"LastRemoteWallClockTime": ran},
    ]
    live = [e for p in polls for e in tracker.update([ad | p], p.get("EnteredCurrentStatus", 0))[0]]
    live_queued = [e for e in live if isinstance(e, JobQueued)]
    assert [(e.job_id, e.prior_attempts) for e in live_queued] == [("0.0", 0), ("0.0", 1)]
    assert again.job_id == "0.0" and again.prior_attempts == 1
    assert again.time == pytest.approx(live_queued[1].time)
    assert again.longest_prior_attempt_s == pytest.approx(live_queued[1].longest_prior_attempt_s)
    assert submitted(live) == ["0.0"]  # the re-queued job is not a new one (PoolView.new_jobs)


def _evicted_once(policy: Policy, report_requeue: bool, then: list[Event]) -> dict[str, Any]:
    """Feed a job's submission, start and eviction (and the schedd's report of it idle again, if
    asked), advise for three hours, and return what the policy keeps."""

    def view(new: list[str]) -> PoolView:
        idle = [MachineView(m, "idle", T0 - 600) for m in ("c0", "h0")]
        return PoolView(idle, [1] + [0] * 23, new_jobs=new)

    policy.observe(JobQueued(T0, "1.0", "alice", replicable=True))
    policy.advise(view(["1.0"]), T0)
    policy.observe(AttemptStarted(T0 + 60, "1.0", "c0"))
    policy.observe(AttemptEnded(T0 + 1800, "1.0", "c0", AttemptOutcome.EVICTED_OWNER, T0 + 60))
    if report_requeue:
        policy.observe(JobQueued(T0 + 1800, "1.0", "alice", 1, 1740.0, replicable=True))
    for event in then:
        policy.observe(event)
    for hour in (1, 2, 3):
        policy.advise(view([]), T0 + hour * H)
    return json.loads(json.dumps(policy.state_dict(), default=str))


def _context() -> PolicyContext:
    return PolicyContext(machine_infos(trace(two_rooms())), seed=4)


@pytest.mark.parametrize("make", [ClusterBandit, ReplicaBandit], ids=["bandit", "replicas"])
def test_a_requeue_report_after_an_eviction_changes_nothing_a_policy_keeps(make: type) -> None:
    # Live, a placement bandit queued the job twice (two queue decisions, penalised twice per
    # wait), and the replica bandit took it for a new family (its submission time lost).
    with_report = _evicted_once(make(_context(), {}), True, [])
    without = _evicted_once(make(_context(), {}), False, [])
    assert with_report == without


def test_a_job_released_from_a_hold_is_queued_again_for_the_bandits_decisions() -> None:
    held_and_released: list[Event] = [
        AttemptStarted(T0 + 2000, "1.0", "h0"),
        AttemptEnded(T0 + 2600, "1.0", "h0", AttemptOutcome.HELD, T0 + 2000),
        JobQueued(T0 + 3000, "1.0", "alice", 2, 1740.0),
    ]
    kept = _evicted_once(ClusterBandit(_context(), {"epsilon": 0.0}), True, held_and_released)
    assert kept["jobs"]["queued"] == ["1.0"]
