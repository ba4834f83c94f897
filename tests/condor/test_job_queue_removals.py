"""Which jobs that left the queue idle the daemon reports removed (real classad2 ads; the real
pool's test, tests/integration/test_real_pool_removals.py, covers the schedd end to end)."""

from __future__ import annotations

import classad2
import pytest

from advisor.condor.job_queue import QUEUE_CONSTRAINT, QueueTracker
from advisor.condor.removals import PENDING_S, removal_query, settle
from plugins.contract.events import JobRemoved

NOW = 1_700_000_000.0


def ad(
    job: str, status: int, starts: int, entered: float | None = None, leave: str = "false"
) -> classad2.ClassAd:
    """A job's ad as the schedd keeps it; a completed job's ``CompletionDate`` is its status
    time, and ``LeaveJobInQueue`` is condor_submit's default unless given."""
    cluster, proc = job.split(".")
    text = (
        f"ClusterId = {cluster}\nProcId = {proc}\nJobStatus = {status}\nNumJobStarts = {starts}\n"
        f"LeaveJobInQueue = {leave}\n"
    )
    if entered:
        text += f"EnteredCurrentStatus = {entered:.0f}\n"
        text += f"CompletionDate = {entered:.0f}\n" if status == 4 else ""
    return classad2.parseOne(text)


def test_only_a_job_removed_without_starting_again_is_reported() -> None:
    queue = QueueTracker()
    idle = [ad("7.0", 1, 0), ad("7.1", 1, 1), ad("7.2", 1, 0), ad("7.3", 1, 0), ad("9.0", 1, 0)]
    queue.update(idle, NOW)
    queue.update([ad("9.0", 2, 1)], NOW + 60)  # 9.0 started: still in the queue
    assert queue.left == {j: (n, NOW) for j, n in (("7.0", 0), ("7.1", 1), ("7.2", 0), ("7.3", 0))}
    constraint, since = removal_query(queue.left)
    assert constraint == "member(ClusterId, {7})"
    history = [
        ad("7.0", 3, 0, NOW + 30),  # removed while idle
        ad("7.1", 3, 2, NOW + 40),  # started again and was removed running: its epoch says so
        ad("7.2", 4, 1, NOW + 50),  # ran and completed between the polls
        ad("5.0", 3, 0, NOW + 20),  # another cluster's
    ]
    found = [h for h in history if classad2.ExprTree(constraint).eval(h)]
    assert [h["ProcId"] for h in found] == [0, 1, 2]
    events, pending = settle(found, queue.left, NOW + 60)
    assert events == [JobRemoved(NOW + 30, "7.0")]
    assert pending == {"7.3": (0, NOW)}  # no record yet (held, or not written): asked again
    assert classad2.ExprTree(since).eval(ad("6.0", 4, 1, NOW - 3600)) is True  # the read stops
    assert classad2.ExprTree(since).eval(history[2]) is False
    later, pending = settle([ad("7.3", 3, 0, NOW + 90)], pending, NOW + 120)
    assert later == [JobRemoved(NOW + 90, "7.3")] and pending == {}
    assert settle([], {"7.3": (0, NOW)}, NOW + PENDING_S)[1] == {}  # then forgotten


def test_a_job_back_in_the_queue_is_not_asked_about() -> None:
    queue = QueueTracker()
    queue.update([ad("7.0", 1, 0)], NOW)
    queue.update([], NOW + 60)  # held: gone from the idle and running jobs
    queue.update([ad("7.0", 1, 0)], NOW + 120)  # released
    assert queue.left == {}


def test_a_cursor_of_an_earlier_version_guesses_no_removal() -> None:
    queue = QueueTracker()
    queue.load({"idle": ["7.0"], "running": {}, "longest": {}})
    queue.update([], NOW)
    assert settle([ad("7.0", 3, 0, NOW)], queue.left, NOW)[0] == []
    restored = QueueTracker()
    restored.load(queue.state())
    assert restored.state() == queue.state()


def test_a_job_held_for_hours_and_then_removed_is_reported_at_its_removal() -> None:
    queue = QueueTracker()
    queue.update([ad("7.0", 1, 0)], NOW)
    queue.update([ad("7.0", 5, 0)], NOW + 60)  # held: still in the queue, not gone
    queue.update([ad("7.0", 5, 0)], NOW + 4 * 3600)
    assert queue.left == {}
    queue.update([], NOW + 4 * 3600 + 60)  # removed while held
    events, pending = settle([ad("7.0", 3, 0, NOW + 4 * 3600 + 30)], queue.left, NOW + 4 * 3700)
    assert events == [JobRemoved(NOW + 4 * 3600 + 30, "7.0")] and pending == {}


def test_the_queue_query_asks_for_held_and_removed_jobs() -> None:
    constraint = classad2.ExprTree(QUEUE_CONSTRAINT)
    assert [constraint.eval(ad("7.0", s, 0)) for s in (1, 2, 3, 4, 5)] == [
        True,
        True,
        True,
        False,
        True,
    ]


@pytest.mark.parametrize(("universe", "asked"), [(5, True), (7, False), (9, False), (12, False)])
def test_the_queue_query_leaves_out_jobs_no_machine_of_the_pool_runs(
    universe: int, asked: bool
) -> None:
    """DAGMan (scheduler), grid and local universe jobs: an idle grid job waiting for hours at
    its remote site would otherwise wake sleeping machines for itself."""
    job = ad("7.0", 1, 0)
    job["JobUniverse"] = universe
    assert classad2.ExprTree(QUEUE_CONSTRAINT).eval(job) is asked


def test_only_a_record_written_as_its_job_ended_stops_the_read() -> None:
    """A job kept in the queue after it ended is written when it leaves, with its old dates:
    its record must not end the read before the removals written earlier (the real pool's
    test_a_job_kept_in_the_queue_hides_no_removal)."""
    _, since = removal_query({"7.0": (0, NOW)})
    stops = classad2.ExprTree(since)
    old = NOW - 3600
    spooled = "JobStatus == 4 && (CompletionDate =?= undefined || time() - CompletionDate < 864000)"
    assert stops.eval(ad("6.0", 4, 1, old)) is True
    assert stops.eval(ad("6.0", 4, 1, old, leave=spooled)) is False
    assert stops.eval(ad("6.0", 4, 1, old, leave="true")) is False
    assert stops.eval(ad("6.0", 3, 0, old)) is False  # (a kept removal let go: flag now false)
    assert stops.eval(ad("6.0", 4, 1, NOW - 60)) is False  # (written after it was last seen)
    unflagged = classad2.parseOne(
        f"ClusterId = 6\nProcId = 0\nJobStatus = 4\nCompletionDate = {old:.0f}"
    )
    assert stops.eval(unflagged) is True


def test_a_removed_job_kept_in_the_queue_is_reported_from_the_queue() -> None:
    queue = QueueTracker()
    queue.update([ad("7.0", 1, 0)], NOW)
    queue.update([ad("7.0", 3, 0, NOW + 30, leave="true")], NOW + 60)
    assert queue.left == {"7.0": (0, NOW)}  # gone for the policies, with no record yet
    events, pending = settle(queue.removed, queue.left, NOW + 60)
    assert events == [JobRemoved(NOW + 30, "7.0")] and pending == {}
