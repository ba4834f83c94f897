"""Each attempt's start is reported once, though an HTCondor 25 schedd writes an attempt's epoch
ad while its queue still lists the job running (real classad2 ads)."""

from __future__ import annotations

import classad2

from advisor.condor.job_queue import QueueTracker
from plugins.contract.events import AttemptStarted, JobQueued

NOW = 1_700_000_000.0


def running(proc: int, started: float) -> classad2.ClassAd:
    return classad2.parseOne(
        f'ClusterId = 7\nProcId = {proc}\nJobStatus = 2\nRemoteHost = "slot1@pc1"\n'
        f"JobCurrentStartDate = {started:.0f}\n"
    )


def starts(queue: QueueTracker, ads: list[classad2.ClassAd], now: float) -> list[str]:
    events, _ = queue.update(ads, now)
    return [e.job_id for e in events if isinstance(e, AttemptStarted)]


def test_a_start_seen_in_the_queue_and_then_in_its_epoch_ad_is_reported_once() -> None:
    queue = QueueTracker()
    assert starts(queue, [running(0, NOW)], NOW + 5) == ["7.0"]
    assert queue.attempt_ended("7.0", NOW)  # its epoch ad: the start was reported
    assert starts(queue, [running(0, NOW)], NOW + 65) == []  # the queue still lists it
    assert starts(queue, [], NOW + 125) == [] and queue.running == {}


def test_an_attempt_first_seen_in_its_epoch_ad_is_not_started_again_by_the_queue() -> None:
    queue = QueueTracker()
    assert not queue.attempt_ended("7.1", NOW)  # ran between two polls: the ad reports it
    assert starts(queue, [running(1, NOW)], NOW + 5) == []


def test_the_next_attempt_is_reported_and_an_earlier_ad_read_late_does_not_repeat_it() -> None:
    queue = QueueTracker()
    assert starts(queue, [running(2, NOW)], NOW + 5) == ["7.2"]
    assert starts(queue, [running(2, NOW + 600)], NOW + 605) == ["7.2"]  # evicted, started again
    assert queue.attempt_ended("7.2", NOW) is False  # the first attempt's ad, late
    assert starts(queue, [running(2, NOW + 600)], NOW + 665) == []


def test_a_job_that_started_before_any_poll_saw_it_idle_is_reported_queued_at_its_qdate() -> None:
    """Its wait is known, as a job seen waiting has: the control group's overhead counts every
    job, not only those that waited through a poll (docs/control-group.md)."""
    queue = QueueTracker()
    assert starts(queue, [], NOW) == []  # a poll before the submission
    ad = running(3, NOW + 40)
    ad.update({"QDate": int(NOW + 10), "NumJobStarts": 1, "Owner": "alice", "RequestCpus": 2})
    old = running(4, NOW + 30)  # submitted before that poll, which saw it idle: reported then
    old.update({"QDate": int(NOW - 100), "NumJobStarts": 1})
    events, _ = queue.update([ad, old], NOW + 60)
    assert events == [
        JobQueued(NOW + 10, "7.3", "alice", cpus=2),
        AttemptStarted(NOW + 40, "7.3", "pc1"),
        AttemptStarted(NOW + 30, "7.4", "pc1"),
    ]
    again, _ = queue.update([ad, old], NOW + 120)
    assert again == []  # reported once
    late = running(6, NOW + 190)  # seen idle by the last poll though dated after it (a clock)
    late.update({"QDate": int(NOW + 125), "NumJobStarts": 0, "JobStatus": 1})
    assert [type(e) for e in queue.update([late], NOW + 121)[0]] == [JobQueued]
    late.update({"NumJobStarts": 1, "JobStatus": 2})
    assert queue.update([late], NOW + 180)[0] == [AttemptStarted(NOW + 190, "7.6", "pc1")]


def test_a_job_that_ran_between_two_polls_is_reported_queued_from_its_epoch_ad() -> None:
    queue = QueueTracker()
    queue.update([], NOW)
    epoch = {"ClusterId": 7, "ProcId": 5, "QDate": int(NOW + 5), "NumJobStarts": 1, "Owner": "bo"}
    assert not queue.attempt_ended("7.5", NOW + 8)  # its epoch ad: a start not reported yet
    assert queue.queued_unseen("7.5", epoch) == [JobQueued(NOW + 5, "7.5", "bo")]
    evicted_before = {**epoch, "NumJobStarts": 2}  # a second attempt: its submission was seen
    assert queue.queued_unseen("7.5", evicted_before) == []
