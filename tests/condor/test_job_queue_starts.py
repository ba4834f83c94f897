"""Each attempt's start is reported once, though an HTCondor 25 schedd writes an attempt's epoch
ad while its queue still lists the job running (real classad2 ads)."""

from __future__ import annotations

import classad2

from advisor.condor.epochs import EPOCH_PROJECTION, attempt_events
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


def test_what_the_epoch_path_reads_is_asked_of_the_schedd() -> None:
    """The schedd returns only the projection: a job that ran between two polls is reported
    queued, with its cores, from the epoch ad as it comes (not from a whole ad)."""
    whole = classad2.parseOne(
        'ClusterId = 7\nProcId = 8\nRemoteHost = "slot1_1@pc1"\nJobCurrentStartDate = 1700000040\n'
        "EpochWriteDate = 1700000100\nQDate = 1700000005\nNumJobStarts = 1\n"
        'Owner = "bo"\nRequestCpus = 4\nAllowedExecuteDuration = 7200\nImageSize = 1000\n'
    )
    epoch = {k: whole[k] for k in EPOCH_PROJECTION if k in whole}
    queue = QueueTracker()
    queue.update([], NOW)
    assert queue.queued_unseen("7.8", epoch) == [
        JobQueued(NOW + 5, "7.8", "bo", expected_runtime_s=7200.0, cpus=4)
    ]
    cores: list[int] = []

    def draw(machine: str, start: float, end: float, n: int) -> float:
        cores.append(n)
        return 0.0

    attempt_events(epoch, draw)
    assert cores == [4]


def idle(proc: int, **attrs: float) -> classad2.ClassAd:
    ad = classad2.parseOne(f'ClusterId = 9\nProcId = {proc}\nJobStatus = 1\nOwner = "al"\n')
    ad.update(attrs)
    return ad


def queued_at(events: list) -> dict[str, float]:
    return {e.job_id: e.time for e in events if isinstance(e, JobQueued)}


def test_a_late_materialized_job_waits_from_its_materialization() -> None:
    """A job factory's procs inherit the cluster's QDate and EnteredCurrentStatus: dated by
    them, a proc materialized two days on had waited two days on arrival (and one that started
    before a poll saw it was not reported queued at all)."""
    cluster = NOW - 2 * 86400
    queue = QueueTracker()
    queue.update([], NOW)
    made = {"QDate": cluster, "EnteredCurrentStatus": cluster, "JobMaterializeDate": NOW + 20}
    events, _ = queue.update([idle(0, **made)], NOW + 60)
    assert queued_at(events) == {"9.0": NOW + 20}
    ran = running(1, NOW + 90)
    ran.update({"QDate": int(cluster), "JobMaterializeDate": int(NOW + 70), "NumJobStarts": 1})
    events, _ = queue.update([idle(0, **made), ran], NOW + 120)
    assert queued_at(events) == {"7.1": NOW + 70}


def test_a_job_new_since_the_last_poll_waits_from_then_whatever_its_ad_says() -> None:
    """A job's user may set its EnteredCurrentStatus (condor_qedit, or +EnteredCurrentStatus at
    submit): a wait of days on arrival would be a sample of the arms' overhead, and 30 such jobs
    in the treated arm tripped the control group's guard for the whole pool."""
    queue = QueueTracker()
    queue.update([], NOW)
    events, _ = queue.update([idle(0, QDate=NOW + 10, EnteredCurrentStatus=1.0)], NOW + 60)
    assert queued_at(events) == {"9.0": NOW}
    held = idle(1, QDate=NOW - 9000, EnteredCurrentStatus=NOW - 9000, JobStatus=5)
    queue.update([held], NOW + 120)
    released = idle(1, QDate=NOW - 9000, EnteredCurrentStatus=NOW + 150)
    assert queued_at(queue.update([released], NOW + 180)[0]) == {"9.1": NOW + 150}
