"""An attempt the queue saw start and no epoch ad ended (its shadow killed) ends as lost once
the queue has shown it over for ``LOST_AFTER_S``; one whose epoch ad comes meanwhile or later
is reported once (real classad2 ads; the real pool's test kills a shadow:
tests/integration/test_real_pool_lost_attempt.py)."""

from __future__ import annotations

import classad2

from advisor.condor.job_queue import QueueTracker
from advisor.condor.lost_attempts import LOST_AFTER_S
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, Event

NOW = 1_700_000_000.0
START = NOW - 300


def ad(status: int, entered: float, start: float = START) -> classad2.ClassAd:
    text = (
        f"ClusterId = 7\nProcId = 0\nJobStatus = {status}\nEnteredCurrentStatus = {entered:.0f}\n"
    )
    if status == 2:
        text += f'RemoteHost = "slot1@pc1.example.org"\nJobCurrentStartDate = {start:.0f}\n'
    return classad2.parseOne(text)


def ends(events: list[Event]) -> list[AttemptEnded]:
    return [e for e in events if isinstance(e, AttemptEnded)]


def started_then_idle(queue: QueueTracker) -> None:
    events, _ = queue.update([ad(2, START)], NOW)
    assert [type(e) for e in events] == [AttemptStarted]
    events, _ = queue.update([ad(1, NOW + 30)], NOW + 60)  # back in the queue
    assert ends(events) == []


def test_an_attempt_requeued_without_an_epoch_ad_ends_lost() -> None:
    queue = QueueTracker()
    started_then_idle(queue)
    events, _ = queue.update([ad(1, NOW + 30)], NOW + 30 + LOST_AFTER_S - 1)
    assert ends(events) == []  # its epoch ad may still come
    events, _ = queue.update([ad(1, NOW + 30)], NOW + 30 + LOST_AFTER_S, {"pc1.example.org": 95})
    lost = AttemptEnded(
        NOW + 30, "7.0", "pc1.example.org", AttemptOutcome.EVICTED_REBOOT, START, 95
    )
    assert ends(events) == [lost]
    events, _ = queue.update([ad(1, NOW + 30)], NOW + 2 * LOST_AFTER_S)
    assert ends(events) == []  # once
    assert queue.end_reported("7.0", START)  # its epoch ad, come late, is dropped


def test_an_epoch_ad_within_the_wait_ends_it_as_it_says() -> None:
    queue = QueueTracker()
    started_then_idle(queue)
    assert not queue.end_reported("7.0", START)  # (the source passes this end on)
    events, _ = queue.update([ad(1, NOW + 30)], NOW + 2 * LOST_AFTER_S)
    assert ends(events) == []


def test_a_later_attempt_shows_the_earlier_over() -> None:
    queue = QueueTracker()
    queue.update([ad(2, START)], NOW)
    events, _ = queue.update([ad(2, NOW + 100, start=NOW + 100)], NOW + 120)
    assert [type(e) for e in events] == [AttemptStarted]
    events, _ = queue.update([ad(2, NOW + 100, start=NOW + 100)], NOW + 100 + LOST_AFTER_S)
    assert [(e.started, e.time) for e in ends(events)] == [(START, NOW + 100)]


def test_an_open_attempt_survives_a_restart_and_a_job_gone_ends_nothing() -> None:
    queue = QueueTracker()
    started_then_idle(queue)
    restored = QueueTracker()
    restored.load(queue.state())
    assert restored.state() == queue.state()
    events, _ = restored.update([ad(1, NOW + 30)], NOW + 30 + LOST_AFTER_S)
    assert [e.started for e in ends(events)] == [START]

    running = QueueTracker()
    running.update([ad(2, START)], NOW)
    events, _ = running.update([], NOW + 60)  # it left the queue: its epoch ad says how
    events += running.update([], NOW + 2 * LOST_AFTER_S)[0]
    assert ends(events) == []
