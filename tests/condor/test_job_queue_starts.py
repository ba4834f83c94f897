"""Each attempt's start is reported once, though an HTCondor 25 schedd writes an attempt's epoch
ad while its queue still lists the job running (real classad2 ads)."""

from __future__ import annotations

import classad2

from advisor.condor.job_queue import QueueTracker
from plugins.contract.events import AttemptStarted

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
