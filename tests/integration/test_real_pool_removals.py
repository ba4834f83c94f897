"""On the real pool: a user's condor_rm reaches the policies as a removal, whether the job was
queued (``JobRemoved``, from the history of the jobs that left the queue idle) or running (its
attempt ends ``removed``), from the schedd and from the job's event log alike. A replay reports
both (simulator/campus/job_book.py); a daemon that missed the first kept a removed job waiting
in its policies for a day and in a trace export until the export's end."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

import pytest

from advisor.condor.event_log import EventLogAttempts, EventLogFollower
from advisor.condor.factory import build_condor_pool
from advisor.condor.source import CondorPoolSource
from advisor.ports import PoolSource
from integration.conftest import first_schedd, pool_state, running_jobs, wait_for
from integration.pool.pool import COLLECTOR, TEST_DIR, ChrootPool
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
)
from plugins.contract.job_ids import split_schedd

pytestmark = pytest.mark.integration
SLEEP = (
    "executable = /bin/sleep\narguments = 600\nshould_transfer_files = NO\nrequest_memory = 64\n"
)


def removals(events: list[Event]) -> set[tuple[str, str, str | None]]:
    """(kind, job, outcome) of every removal and ended attempt."""
    return {
        (type(e).__name__, e.job_id, e.outcome.value if isinstance(e, AttemptEnded) else None)
        for e in events
        if isinstance(e, JobRemoved | AttemptEnded)
    }


def local(job: str) -> str:
    """``cluster.proc`` of a job id the daemon names on its schedd, for condor_rm and the like."""
    return split_schedd(job)[0]


def polling(events: list[Event], source: PoolSource | None = None) -> Callable[[], list[Event]]:
    """A poll of ``source`` (else a new one of the test pool) that adds to ``events`` and
    returns them all; what earlier tests left is polled once and dropped."""
    if source is None:
        source, _ = build_condor_pool({"collector": COLLECTOR, "active_idle_s": 0})

    def poll() -> list[Event]:
        obs = source.poll(time.time())
        assert obs.healthy
        events.extend(obs.events)
        return events

    poll()
    events.clear()
    return poll


def test_a_removed_job_is_a_removal_whether_it_waited_or_ran(idle_pool: ChrootPool) -> None:
    events: list[Event] = []
    poll = polling(events)
    log = f"{TEST_DIR}/removals-{time.monotonic_ns()}.log"
    idle_pool.submit(f"{SLEEP}log = {log}\nqueue 1\n")
    idle_pool.submit(f"{SLEEP}log = {log}\nrequirements = false\nqueue 1\n")

    def one_running_one_idle() -> tuple[str, str] | None:
        queued = {e.job_id for e in poll() if isinstance(e, JobQueued)}
        running = sorted(set(running_jobs()) & queued)
        return (running[0], min(queued - {running[0]})) if len(queued) == 2 and running else None

    why = partial(pool_state, idle_pool)
    ran, waited = wait_for(one_running_one_idle, 60, "one job running, one idle", explain=why)
    idle_pool.run("condor_rm", local(ran), local(waited), user="tester")
    expected = {("AttemptEnded", ran, "removed"), ("JobRemoved", waited, None)}
    wait_for(lambda: removals(poll()) == expected, 60, "both removals", explain=why)
    for _ in range(3):  # nothing more, nothing twice
        time.sleep(1)
        poll()
    ended = [e for e in events if isinstance(e, JobRemoved | AttemptEnded)]
    assert len([e for e in ended if e.job_id in (ran, waited)]) == 2
    (gone,) = [e for e in ended if isinstance(e, JobRemoved)]
    assert abs(gone.time - time.time()) < 60  # when the user removed it

    # the same two removals in the job event log the schedd wrote (no owner eviction)
    follower = EventLogFollower(idle_pool.host_path(log), EventLogAttempts())
    from_log = follower.read() + follower.read()
    assert removals(from_log) == {(kind, local(j), outcome) for kind, j, outcome in expected}
    assert AttemptOutcome.EVICTED_OWNER not in {getattr(e, "outcome", None) for e in from_log}


def test_a_held_job_is_not_a_removal(idle_pool: ChrootPool) -> None:
    events: list[Event] = []
    poll = polling(events)
    idle_pool.submit(f"{SLEEP}requirements = false\nqueue 1\n")
    (job,) = wait_for(
        lambda: {e.job_id for e in poll() if isinstance(e, JobQueued)}, 60, "a job idle"
    )
    idle_pool.run("condor_hold", local(job), user="tester")
    for _ in range(3):
        time.sleep(1)
        poll()
    idle_pool.run("condor_release", local(job), user="tester")
    wait_for(lambda: sum(isinstance(e, JobQueued) for e in poll()) == 2, 30, "idle again")
    assert not [e for e in events if isinstance(e, JobRemoved)]
    idle_pool.run("condor_rm", local(job), user="tester")
    wait_for(lambda: removals(poll()) == {("JobRemoved", job, None)}, 30, "its removal")


def test_a_job_held_while_it_waits_stays_known_until_its_removal(idle_pool: ChrootPool) -> None:
    """Held jobs are read with the queue: a job held for any time and then removed is reported
    at its removal (before, it left the idle jobs at its hold and was asked about for ten
    minutes only)."""
    source, _ = build_condor_pool({"collector": COLLECTOR, "active_idle_s": 0})
    assert isinstance(source, CondorPoolSource)
    source.poll(time.time())
    (schedd,) = [s for s in source.schedds if s.name == first_schedd()]
    idle_pool.submit(f"{SLEEP}requirements = false\nqueue 1\n")
    events: list[Event] = []

    def idle() -> set[str]:
        events.extend(source.poll(time.time()).events)
        return {e.job_id for e in events if isinstance(e, JobQueued)}

    (job,) = wait_for(idle, 60, "a job idle")
    idle_pool.run("condor_hold", local(job), user="tester")
    wait_for(lambda: idle() and local(job) in schedd.queue.held, 30, "the job held")
    assert schedd.queue.left == {}
    idle_pool.run("condor_rm", local(job), user="tester")
    wait_for(lambda: idle() and removals(events) == {("JobRemoved", job, None)}, 30, "removal")


def cluster_of(submitted: str) -> str:
    return submitted.split("submitted to cluster ")[1].split(".")[0]


def test_a_job_kept_in_the_queue_hides_no_removal(idle_pool: ChrootPool) -> None:
    """A job kept in the queue after it ends (``LeaveJobInQueue``: a spooled job's output waits
    there for days) has its history record written when it leaves at last, with its old status
    time. The removals' history read stopped at the first record older than the jobs asked
    about, so such a record hid the removals written before it. A job removed but kept in the
    queue has no record yet: its removal is read from the queue."""
    events: list[Event] = []
    poll = polling(events)
    job = "executable = /bin/true\nshould_transfer_files = NO\nrequest_memory = 64\n"
    done = cluster_of(
        idle_pool.submit(f"{job}leave_in_queue = JobStatus == 4 && MY.Keep =!= false\nqueue 1\n")
    )
    kept = cluster_of(
        idle_pool.submit(f"{SLEEP}requirements = false\nleave_in_queue = true\nqueue 1\n")
    )
    waited = cluster_of(idle_pool.submit(f"{SLEEP}requirements = false\nqueue 1\n"))

    def clusters(kind: type[JobQueued] | type[AttemptEnded] | type[JobRemoved]) -> set[str]:
        return {local(e.job_id).split(".")[0] for e in poll() if isinstance(e, kind)}

    def removals_seen() -> str:
        return f"removals of clusters {clusters(JobRemoved)}; kept {kept}, waited {waited}"

    why = partial(pool_state, idle_pool)
    wait_for(lambda: {kept, waited} <= clusters(JobQueued), 60, "two jobs idle", explain=why)
    wait_for(lambda: done in clusters(AttemptEnded), 60, "a job completed", explain=why)
    old = str(int(time.time()) - 3600)  # as if it had completed an hour ago
    for attr in ("EnteredCurrentStatus", "CompletionDate"):
        idle_pool.run("condor_qedit", f"{done}.0", attr, old, user="tester")
    idle_pool.run("condor_rm", f"{kept}.0", f"{waited}.0", user="tester")
    idle_pool.run("condor_qedit", f"{done}.0", "Keep", "false", user="tester")

    def left_queue() -> bool:  # (not polled meanwhile: its record must follow the removal's)
        out = idle_pool.run("condor_history", "-af", "ClusterId", "-limit", "20", user="tester")
        return done in out.split()

    wait_for(left_queue, 60, "the kept job's record written", explain=why)
    try:
        removed = partial(clusters, JobRemoved)
        wait_for(lambda: {kept, waited} <= removed(), 30, "both removals", explain=removals_seen)
    finally:  # (condor_rm -all leaves it in the queue for the next test)
        idle_pool.run("condor_rm", "-forcex", f"{kept}.0", user="tester")


@pytest.mark.parametrize("with_log", [False, True], ids=["schedd", "schedd and event log"])
def test_each_submission_start_and_end_is_reported_once(
    idle_pool: ChrootPool, with_log: bool
) -> None:
    """The schedd's queue still lists a job running when its epoch ad is written, and the job's
    event log reports each event again, up to a few seconds apart; the source passes one of
    each (advisor/condor/job_queue.py, reported_once.py)."""
    log = f"{TEST_DIR}/once-{time.monotonic_ns()}.log"
    config: dict[str, object] = {"collector": COLLECTOR, "active_idle_s": 0}
    if with_log:  # (the test pool has two schedds: the log's is named)
        config["event_log"] = str(idle_pool.host_path(log))
        config["event_log_schedd"] = first_schedd()
    source, _ = build_condor_pool(config)
    source.poll(time.time())
    events: list[Event] = []
    idle_pool.submit(f"{SLEEP.replace('600', '3')}log = {log}\nqueue 4\n")

    def four_ended() -> bool:
        events.extend(source.poll(time.time()).events)
        return sum(isinstance(e, AttemptEnded) for e in events) >= 4

    wait_for(four_ended, 90, "four attempts ended", explain=partial(pool_state, idle_pool))
    for _ in range(3):  # the later of two reports would come now
        time.sleep(1)
        events.extend(source.poll(time.time()).events)
    kinds = [
        type(e).__name__ for e in events if isinstance(e, JobQueued | AttemptStarted | AttemptEnded)
    ]
    expected = ["AttemptEnded"] * 4 + ["AttemptStarted"] * 4 + ["JobQueued"] * 4
    assert sorted(kinds) == expected, "\n".join(map(repr, events))
