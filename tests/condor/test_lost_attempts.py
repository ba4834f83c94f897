"""An attempt the queue saw start and no epoch ad ended (its shadow killed) ends as lost once
the queue has shown it over for ``LOST_AFTER_S``; one whose epoch ad comes meanwhile or later
is reported once (real classad2 ads; the real pool's test kills a shadow:
tests/integration/test_real_pool_lost_attempt.py)."""

from __future__ import annotations

import classad2

from advisor.condor.factory import machine_inventory
from advisor.condor.job_queue import QueueTracker
from advisor.condor.lost_attempts import LOST_AFTER_S
from advisor.condor.retry import Backoff
from advisor.condor.schedd_reader import ScheddReader
from advisor.condor.source import CondorPoolSource
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, Event, JobQueued

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
    watts = {"pc1.example.org": 95.0}
    events, _ = queue.update(
        [ad(1, NOW + 30)], NOW + 30 + LOST_AFTER_S, lambda m, started, ended, cpus: watts[m]
    )
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


class Schedd:
    """A schedd's queue and epoch file in memory, with ``jobEpochHistory``'s reading rule."""

    def __init__(self) -> None:
        self.queue: list[classad2.ClassAd] = []
        self.epochs: list[dict[str, object]] = []

    def query(self, constraint: str, projection: list[str]) -> list[classad2.ClassAd]:
        return self.queue

    def jobEpochHistory(self, projection: list[str], since: str | None) -> list[dict[str, object]]:
        return list(reversed(self.epochs))  # (all of them: the reader drops what it has seen)

    def history(self, constraint: str, projection: list[str], since: str) -> list[object]:
        return []


def test_an_epoch_ad_come_after_the_attempt_ended_as_lost_reports_nothing_again() -> None:
    """Its start as well: the job had started again meanwhile, so the start of the late ad
    no longer matched the queue's latest, and it was reported a second time."""
    schedd = Schedd()
    reader = ScheddReader("ap", lambda: schedd, Backoff("ap"))
    source = CondorPoolSource(lambda: [], [reader], machine_inventory({}, {}), Backoff("cm"))

    def poll(now: float, *queue: classad2.ClassAd) -> list[Event]:
        schedd.queue = list(queue)
        return [e for e in source.poll(now).events if not isinstance(e, JobQueued)]

    assert [type(e) for e in poll(NOW, ad(2, START))] == [AttemptStarted]
    assert poll(NOW + 60, ad(1, NOW + 30)) == []
    again = NOW + 30 + LOST_AFTER_S
    events = poll(again, ad(2, again, start=again))
    assert [(type(e), getattr(e, "started", e.time)) for e in events] == [
        (AttemptEnded, START),
        (AttemptStarted, again),
    ]
    late: dict[str, object] = {"ClusterId": 7, "ProcId": 0, "RunInstanceID": 0}
    late |= {"EpochWriteDate": NOW + 30, "JobCurrentStartDate": START, "VacateReasonCode": 1011}
    schedd.epochs.append(late | {"RemoteHost": "slot1@pc1.example.org"})
    assert poll(again + 60, ad(2, again, start=again)) == []
