"""``frugal`` 11: the payback hold expects a held job to start later among as many of the safest
machines as jobs of its class wait, counted from the events, so a queue of long jobs is no longer
held all day for one safe room that cannot take them all."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tracekit import MONDAY, H

from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    JobQueued,
    JobRemoved,
)
from plugins.contract.policy import MachineInfo, MachineView, PolicyContext, PoolView
from plugins.frugal.payback import kept_off, lost_hours
from plugins.frugal.policy import HELD, FrugalPolicy
from plugins.frugal.waiting import WaitingJobs

DAY = 24 * H
EVICTED = AttemptOutcome.EVICTED_OWNER
LONGEST = {"1.0": 11.5 * H, "1.1": 30 * H}


def test_a_wait_is_counted_from_a_submission_or_an_eviction_until_a_start_or_a_removal() -> None:
    waiting = WaitingJobs()
    waiting.observe(JobQueued(MONDAY, "1.0", "ann"), LONGEST)
    waiting.observe(JobQueued(MONDAY, "1.1", "ann"), LONGEST)
    waiting.observe(JobQueued(MONDAY, "1.2", "ann"), LONGEST)
    assert waiting.by_class(MONDAY + H, 1)[0] == 3
    waiting.observe(AttemptStarted(MONDAY + H, "1.0", "pc"), LONGEST)
    waiting.observe(AttemptStarted(MONDAY + H, "1.1", "pc"), LONGEST)
    waiting.observe(JobRemoved(MONDAY + H, "1.2"), LONGEST)
    assert not waiting.by_class(MONDAY + H, 1).any()
    evicted_at = MONDAY + 13 * H
    waiting.observe(AttemptEnded(evicted_at, "1.0", "pc", EVICTED, MONDAY + H), LONGEST)
    waiting.observe(AttemptEnded(evicted_at, "1.1", "pc", EVICTED, MONDAY + H), LONGEST)
    # a daemon reports the requeue too: it is no second wait
    waiting.observe(JobQueued(evicted_at, "1.0", "ann", prior_attempts=1), LONGEST)
    counts = waiting.by_class(evicted_at + H, 1)
    assert counts[11] == 1 and counts[23] == 1 and counts.sum() == 2  # 30 h: the last class
    restored = WaitingJobs()
    restored.load_state(json.loads(json.dumps(waiting.state_dict())))
    assert (restored.by_class(evicted_at + H, 1) == counts).all()
    # after a day the starvation bound matches them without advice: no longer counted
    assert not waiting.by_class(evicted_at + DAY + 1, 1).any()


def test_the_later_start_is_expected_among_as_many_safest_machines_as_jobs_wait() -> None:
    rates = np.zeros((2, 80))
    rates[1] = 0.5  # a quiet room of one machine, a busy one of nine
    lost = lost_hours(rates, np.array([10.0]), to_reboot_h=20.0)
    lost = np.repeat(lost, 2, axis=2)  # two classes alike
    machines = np.array([1.0, 9.0])
    one_waits = kept_off(lost, machines, np.array([0.0, 0.1]))
    assert one_waits[:, 0].tolist() == [False, True]  # the quiet machine is expected free later
    # five wait: later is 1 + (0 + 4 x 1.92 h) / 5 hours lost, more than 1.92 h now in the busy room
    five_wait = kept_off(lost, machines, np.array([0.0, 0.5]))
    assert five_wait[:, 0].tolist() == [False, True] and not five_wait[:, 1].any()
    assert (kept_off(lost, machines, np.zeros(2)) == kept_off(lost, machines, 0.0)).all()


def ranks_with_jobs_waiting(
    waiting: int, options: dict[str, str], quiet_jobs_at_once: int = 1, cpus: int = 1
) -> tuple[float, float]:
    """The ranks of class 11 at Monday 08:00 (reboot in 19 h) in a pool of nine machines of a room
    owners take every five hours and one of a room nobody comes to, after 60 jobs of 12 hours
    completed and ``waiting`` jobs requesting ``cpus`` cores each were evicted after 11.5 hours
    an hour earlier (and requeued, as the replay and the daemon report it)."""
    machines = {
        f"busy-{i}": MachineInfo(f"busy-{i}", "busy", "Normal", 57.0, 40.0, 2.0) for i in range(9)
    }
    machines["quiet"] = MachineInfo("quiet", "quiet", "Normal", 57.0, 40.0, 2.0, quiet_jobs_at_once)
    policy = FrugalPolicy(PolicyContext(machines, seed=1), {"futile_below": 0.0, **options})
    busy, quiet = (policy.arrivals.cluster_index[c] for c in ("busy", "quiet"))
    policy.arrivals.logins[busy] = 9000.0 / 5
    policy.arrivals.exposure[busy] = 9000.0
    policy.arrivals.exposure[quiet] = 1e6
    for job in range(60):
        ended = AttemptEnded(MONDAY + 12 * H, f"1.{job}", "quiet", AttemptOutcome.COMPLETED, MONDAY)
        policy.observe(ended)
    now = MONDAY + 21 * DAY + 8 * H
    for job in range(waiting):
        policy.observe(JobQueued(now - 13 * H, f"2.{job}", "ann", cpus=cpus))
        policy.observe(AttemptStarted(now - 12.5 * H, f"2.{job}", "quiet"))
        policy.observe(AttemptEnded(now - H, f"2.{job}", "quiet", EVICTED, now - 12.5 * H))
        policy.observe(JobQueued(now - H, f"2.{job}", "ann", 1, 11.5 * H, cpus=cpus))
    view = PoolView([MachineView(m, "idle", now - H) for m in machines], [0] * 24)
    advice = policy.advise(view, now)
    ranks = {m: advice.shared[name].rank_by_prior_hours or () for m, name in advice.follows.items()}
    return ranks["busy-0"][11], ranks["quiet"][11]


@pytest.mark.parametrize("waiting", [0, 1, 5])
def test_frugal_11_holds_a_class_for_the_safe_room_only_while_it_can_take_the_queue(
    waiting: int,
) -> None:
    busy, quiet = ranks_with_jobs_waiting(waiting, {})
    assert quiet > 0
    # one job may wait for the quiet machine; five cannot all start there
    assert (busy == HELD) is (waiting < 5)
    assert ranks_with_jobs_waiting(waiting, {"payback_queue": "off"})[0] == HELD  # frugal 10


def test_a_partitionable_machine_takes_as_many_of_the_queue_as_it_has_cores() -> None:
    """Five jobs wait: one single-slot quiet machine cannot take them all, an 8-core
    partitionable one can, so the busy room stays held for it (docs/slots.md)."""
    assert ranks_with_jobs_waiting(5, {})[0] > 0
    busy, quiet = ranks_with_jobs_waiting(5, {}, quiet_jobs_at_once=8)
    assert busy == HELD and quiet > 0
    assert ranks_with_jobs_waiting(9, {}, quiet_jobs_at_once=8)[0] == HELD


def test_a_job_that_requests_several_cores_counts_as_that_many_of_the_queue() -> None:
    """frugal 12: four 2-core jobs take as many cores as eight one-core jobs, more than the
    safest 2-core partitionable machine is expected to take, so the busy room is no longer held
    for it; on single-slot machines each takes one whole machine, as a one-core job does."""
    busy_held_for = {
        (jobs, cpus): ranks_with_jobs_waiting(jobs, {}, quiet_jobs_at_once=2, cpus=cpus)[0]
        for jobs, cpus in ((4, 1), (8, 1), (4, 2))
    }
    assert busy_held_for[4, 1] == HELD and busy_held_for[8, 1] > 0
    assert busy_held_for[4, 2] == busy_held_for[8, 1]
    assert ranks_with_jobs_waiting(4, {}, cpus=2) == ranks_with_jobs_waiting(4, {})


def test_a_waiting_job_is_counted_by_the_cores_it_takes_until_it_leaves_the_queue() -> None:
    waiting = WaitingJobs()
    waiting.observe(JobQueued(MONDAY, "1.0", "ann", cpus=4), LONGEST)
    waiting.observe(JobQueued(MONDAY, "2.0", "ann"), LONGEST)
    assert waiting.by_class(MONDAY + H, most_at_once=8)[0] == 5
    assert waiting.by_class(MONDAY + H, most_at_once=2)[0] == 3  # 4 cores fit no machine: 2
    assert waiting.by_class(MONDAY + H, most_at_once=1)[0] == 2  # a single slot each
    waiting.observe(AttemptStarted(MONDAY + H, "1.0", "pc"), LONGEST)
    assert waiting.by_class(MONDAY + 2 * H, most_at_once=8)[0] == 1  # running: not counted
    evicted_1 = MONDAY + 13 * H
    waiting.observe(JobQueued(evicted_1, "1.0", "ann", 1, 12 * H, cpus=4), LONGEST)  # requeued
    waiting.observe(AttemptEnded(evicted_1, "1.0", "pc", EVICTED, MONDAY + H), LONGEST)
    assert waiting.by_class(MONDAY + 14 * H, most_at_once=8)[11] == 4  # either order: 4 cores
    restored = WaitingJobs()
    restored.load_state(json.loads(json.dumps(waiting.state_dict())))
    assert restored.by_class(MONDAY + 14 * H, most_at_once=8)[11] == 4
    waiting.observe(AttemptStarted(MONDAY + 14 * H, "1.0", "pc"), LONGEST)
    waiting.observe(
        AttemptEnded(MONDAY + 15 * H, "1.0", "pc", AttemptOutcome.COMPLETED, 0), LONGEST
    )
    assert not waiting.cpus  # gone for good: forgotten
    waiting.observe(JobQueued(MONDAY, "3.0", "ann", cpus=2), LONGEST)
    waiting.by_class(MONDAY + 2 * DAY, most_at_once=8)  # it left the queue unseen: forgotten
    assert not waiting.cpus
    waiting.observe(AttemptStarted(MONDAY + 2 * DAY, "3.0", "pc"), LONGEST)  # it was there
    evicted = MONDAY + 2 * DAY + H
    waiting.observe(AttemptEnded(evicted, "3.0", "pc", EVICTED, MONDAY + 2 * DAY), LONGEST)
    waiting.observe(JobQueued(evicted, "3.0", "ann", 1, H, cpus=2), LONGEST)  # back in the queue
    assert waiting.by_class(evicted, most_at_once=8)[0] == 2  # with its cores again
    waiting.observe(JobQueued(evicted, "4.0", "ann", 1, H, cpus=2), LONGEST)  # never seen waiting
    waiting.observe(AttemptStarted(evicted, "3.0", "pc"), LONGEST)  # its end will go unseen
    waiting.by_class(evicted, most_at_once=8)
    assert not waiting.cpus  # neither is remembered for good
    older = WaitingJobs()  # a frugal 11 snapshot: the waits alone, one core each
    older.load_state({"2.0": [0, MONDAY]})
    assert older.by_class(MONDAY + H, most_at_once=8)[0] == 1


def test_after_a_restart_the_machines_are_counted_by_their_cores_again() -> None:
    machines = {
        "eight": MachineInfo("eight", "room", "Normal", 57.0, 40.0, 2.0, 8),
        "one": MachineInfo("one", "room", "Normal", 57.0, 40.0, 2.0),
    }
    policy = FrugalPolicy(PolicyContext(machines, seed=1))
    restored = FrugalPolicy(PolicyContext(machines, seed=1))
    restored.load_state(json.loads(json.dumps(policy.state_dict())))
    assert policy.arrivals.slots == restored.arrivals.slots == [9]
    assert restored.arrivals.machines == [2]
