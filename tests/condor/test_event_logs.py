"""Real job event logs (../shared/data/c_htcondor) parse into the project's attempt events."""

from __future__ import annotations

import socket
from pathlib import Path

import htcondor2
import pytest

from advisor.condor.epochs import attempt_events, outcome_of
from advisor.condor.event_log import EventLogAttempts, EventLogFollower
from advisor.condor.factory import build_condor_pool
from advisor.condor.retry import Backoff
from advisor.condor.schedd_reader import ScheddReader
from advisor.condor.source import CondorPoolSource
from condor.fixtures import EVENT_LOGS, FIXTURES, IAC_EXCERPT, lsst_node_logs
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    JobQueued,
    JobRemoved,
)

pytestmark = pytest.mark.realdata


def _events(path: Path) -> list:
    """The whole log's events, as a follower gives them over two reads."""
    attempts = EventLogAttempts()
    log = htcondor2.JobEventLog(str(path)).events(stop_after=0)
    events = [e for event in log for e in attempts.feed(event)]
    return events + attempts.settle(attempts.evicted)


def test_simple_log_is_one_completed_attempt(shared_data: Path) -> None:
    events = _events(shared_data / FIXTURES / EVENT_LOGS[2])
    queued, started, ended = events
    assert isinstance(queued, JobQueued) and queued.job_id == "23515.0"
    assert started == AttemptStarted(started.time, "23515.0", "129.93.244.208")
    assert isinstance(ended, AttemptEnded) and ended.outcome is AttemptOutcome.COMPLETED
    assert ended.time - ended.started == 4 * 60 + 1  # 17:51:37 -> 17:55:38
    assert ended.started == started.time


def test_every_attempt_ends_once_and_after_it_started(shared_data: Path) -> None:
    ended = 0
    for name in EVENT_LOGS:
        open_by_job: dict[str, float] = {}
        for e in _events(shared_data / FIXTURES / name):
            if isinstance(e, AttemptStarted):
                assert e.job_id not in open_by_job
                open_by_job[e.job_id] = e.time
            elif isinstance(e, AttemptEnded):
                assert open_by_job.pop(e.job_id) == e.started <= e.time
                ended += 1
    assert ended == 4  # the attempts these logs end: the checks above ran on each


def test_desktop_pool_evictions_are_owner_evictions(shared_data: Path, tmp_path: Path) -> None:
    """IAC's 2004 cycle-stealing pool: one job evicted three times as owners came back. The
    excerpt was hand-elided ("[...]") and follows a shell prompt; only those lines are dropped."""
    text = (shared_data / IAC_EXCERPT).read_text().splitlines()
    first = next(i for i, line in enumerate(text) if line.startswith("000 ("))
    last = max(i for i, line in enumerate(text) if line == "...")
    kept: list[str] = []
    for line in text[first : last + 1]:
        if line.strip() and line != "[...]" and not (line == "..." == (kept or [""])[-1]):
            kept.append(line)
    log = tmp_path / "std_universe.log"
    log.write_text("\n".join(kept) + "\n")
    events = _events(log)
    ended = [e for e in events if isinstance(e, AttemptEnded)]
    assert [e.outcome for e in ended] == [AttemptOutcome.EVICTED_OWNER] * 3
    assert [e.machine for e in ended] == ["161.72.65.35", "161.72.65.35", "161.72.65.11"]
    assert [e.time - e.started for e in ended] == [134.0, 130.0, 4956.0]
    still_running = [e for e in events if isinstance(e, AttemptStarted)][-1]
    assert still_running.machine == "161.72.66.25"


def test_follower_resumes_without_repeating(shared_data: Path) -> None:
    path = shared_data / FIXTURES / EVENT_LOGS[0]
    whole = _events(path)
    first = EventLogFollower(path, EventLogAttempts())
    assert first.read() == whole and first.read() == []
    cursor = first.state()
    second = EventLogFollower(path, EventLogAttempts())
    second.load(cursor)
    assert second.read() == []
    assert second.consumed == cursor["consumed"]


@pytest.mark.parametrize(
    ("ad", "outcome"),
    [
        ({"VacateReasonCode": 1011, "JobStatus": 2}, AttemptOutcome.EVICTED_OWNER),
        ({"VacateReasonCode": 1013, "JobStatus": 2}, AttemptOutcome.EVICTED_REBOOT),
        ({"VacateReasonCode": 1010, "JobStatus": 1}, AttemptOutcome.EVICTED_REBOOT),
        ({"VacateReasonCode": 1023, "JobStatus": 2}, AttemptOutcome.REMOVED),
        ({"JobStatus": 2}, AttemptOutcome.COMPLETED),  # as a real 25 schedd writes it
        ({"JobStatus": 4, "ExitCode": 0}, AttemptOutcome.COMPLETED),
        ({"JobStatus": 3}, AttemptOutcome.REMOVED),
        ({"JobStatus": 5}, AttemptOutcome.HELD),
    ],
)
def test_vacate_reasons_map_to_outcomes(ad: dict, outcome: AttemptOutcome) -> None:
    assert outcome_of(ad) is outcome


def test_epoch_ad_gives_start_and_end_on_the_slots_machine() -> None:
    ad = {
        "ClusterId": 3,
        "ProcId": 0,
        "RemoteHost": "slot1_2@pc2.example.org",
        "JobCurrentStartDate": 1000,
        "EpochWriteDate": 1600,
        "VacateReasonCode": 1011,
    }
    asked = []

    def draw(machine: str, started: float, ended: float, cpus: int) -> float:
        asked.append((machine, started, ended, cpus))
        return 57.0

    started, ended = attempt_events({**ad, "RequestCpus": 2}, draw)
    assert started == AttemptStarted(1000.0, "3.0", "pc2.example.org")
    assert ended == AttemptEnded(
        1600.0, "3.0", "pc2.example.org", AttemptOutcome.EVICTED_OWNER, 1000.0, 57.0
    )
    assert asked == [("pc2.example.org", 1000.0, 1600.0, 2)]  # its share, of its cores
    assert attempt_events({**ad, "RemoteHost": None}, draw) == []


def test_a_removed_running_job_is_a_removal_not_an_owner_eviction(
    shared_data: Path, tmp_path: Path
) -> None:
    """A 2025 pool's DAG runs: ``condor_rm`` of a running node writes JOB_EVICTED, then
    JOB_ABORTED at the same second. Read as an owner's eviction, each would teach the policies a
    return that never happened."""
    logs = lsst_node_logs(shared_data, tmp_path)
    ended = [e for path in logs.values() for e in _events(path) if isinstance(e, AttemptEnded)]
    by_outcome = {o: sum(e.outcome is o for e in ended) for o in AttemptOutcome}
    assert by_outcome[AttemptOutcome.REMOVED] == 3  # the three evicted-then-aborted nodes
    assert by_outcome[AttemptOutcome.EVICTED_OWNER] == 0
    assert by_outcome[AttemptOutcome.COMPLETED] == len(ended) - 3
    tiny = _events(logs["tiny_problems"])
    (removed,) = [e for e in tiny if isinstance(e, AttemptEnded) and e.outcome == "removed"]
    assert (removed.job_id, removed.machine, removed.started) == ("9229.0", "test02", 1739447991)
    assert removed.time - removed.started == 43  # 11:59:51 to 12:00:34
    starts = [e for e in tiny if isinstance(e, AttemptStarted)]
    assert {e.machine for e in starts} == {"test02"}  # SlotName slot1_2@test02, or the alias


def test_dagman_itself_is_no_attempt_on_a_machine(shared_data: Path, tmp_path: Path) -> None:
    """A scheduler universe job runs in the schedd: its EXECUTE names its submit host and no
    slot. It leaves the queue there, and its run is no machine's (test02 is an execute point
    too, whose node jobs' starts stay theirs)."""
    logs = lsst_node_logs(shared_data, tmp_path, "dagman")
    events = [e for path in logs.values() for e in _events(path)]
    assert len(logs) > 3 and not [e for e in events if isinstance(e, AttemptStarted | AttemptEnded)]
    removed = [e for e in events if isinstance(e, JobRemoved)]
    queued = [e for e in events if isinstance(e, JobQueued)]
    assert sorted(e.job_id for e in removed) == sorted(e.job_id for e in queued)


def test_a_removal_written_after_the_read_still_counts(shared_data: Path, tmp_path: Path) -> None:
    """The follower reads between the JOB_EVICTED and the JOB_ABORTED of a condor_rm: the
    eviction waits for the next read, which finds the removal; an eviction nothing follows is
    the owner's, one read later."""
    whole = lsst_node_logs(shared_data, tmp_path / "runs")["tiny_problems"].read_text()
    cut = whole.index("009 (9229.000.000)")
    log = tmp_path / "nodes.log"
    log.write_text(whole[:cut])
    follower = EventLogFollower(log, EventLogAttempts())
    first = follower.read()
    assert not [e for e in first if isinstance(e, AttemptEnded) and e.job_id == "9229.0"]
    assert follower.state()["evicted"]  # held, and kept across a restart
    resumed = EventLogFollower(log, EventLogAttempts())
    resumed.load(follower.state())
    log.write_text(whole)
    second = [e for e in resumed.read() if isinstance(e, AttemptEnded) and e.job_id == "9229.0"]
    assert [e.outcome for e in second] == [AttemptOutcome.REMOVED]
    log.write_text(whole[:cut])
    owner = EventLogFollower(log, EventLogAttempts())
    owner.read()
    later = [e for e in owner.read() if isinstance(e, AttemptEnded) and e.job_id == "9229.0"]
    assert [e.outcome for e in later] == [AttemptOutcome.EVICTED_OWNER]


def test_an_event_log_waits_for_the_schedd_its_jobs_belong_to(shared_data: Path) -> None:
    # schedds found through the collector: while it does not answer, the log's jobs have no
    # schedd to be named on, and they wait in the log rather than go out with bare ids that the
    # schedd's own reports (cluster.proc@schedd) would never match
    with socket.socket() as sock:  # a collector nobody runs
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = shared_data / FIXTURES / EVENT_LOGS[2]
    source, _ = build_condor_pool({"collector": f"127.0.0.1:{port}", "event_log": str(log)})
    assert isinstance(source, CondorPoolSource)
    assert source.poll(1000.0).events == []
    source.schedds = [ScheddReader("ap.example.org", unreachable, Backoff("schedd"))]  # found
    events = source.poll(2000.0).events
    assert [getattr(e, "job_id", None) for e in events] == ["23515.0@ap.example.org"] * 3


def unreachable() -> None:
    raise OSError("connection refused")
