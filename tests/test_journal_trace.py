"""A live journal exported as a trace keeps what partitionable slots need: each machine's cores
(the jobs it ran at once) and each job's requested cores, through the files ``replay`` reads."""

from __future__ import annotations

from pathlib import Path

from tracekit import MONDAY, H

from advisor.lab.journal_trace import TraceBuilder, inventory_of
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    JobQueued,
    JobRemoved,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineInfo
from simulator.traces import read_inventory, read_jobs, write_inventory, write_jobs


def test_the_exported_trace_keeps_the_machines_cores_and_the_jobs_requests(tmp_path: Path) -> None:
    machines = {
        "ep1": MachineInfo("ep1", "lab", "normal", 57.0, 40.0, 2.0, jobs_at_once=8),
        "ep2": MachineInfo("ep2", "lab", "normal", 57.0, 40.0, 2.0),
    }
    write_inventory(inventory_of(machines), tmp_path / "machines.yaml")
    inventory = read_inventory(tmp_path / "machines.yaml")
    assert {m.name: m.jobs_at_once for m in inventory.machines} == {"ep1": 8, "ep2": 1}
    builder = TraceBuilder()
    builder.feed(
        [
            JobQueued(MONDAY, "1.0", "ann", cpus=4),
            JobQueued(MONDAY, "2.0", "bob"),
            AttemptStarted(MONDAY + 60, "1.0", "ep1"),
            AttemptEnded(MONDAY + H, "1.0", "ep1", AttemptOutcome.COMPLETED, MONDAY + 60),
            AttemptStarted(MONDAY + 120, "2.0", "ep2"),
            AttemptEnded(MONDAY + H, "2.0", "ep2", AttemptOutcome.COMPLETED, MONDAY + 120),
        ]
    )
    write_jobs(builder.job_table(), tmp_path / "jobs.csv")
    jobs = read_jobs(tmp_path / "jobs.csv")
    assert dict(zip(jobs.job_id, jobs.cpus.tolist(), strict=True)) == {"1.0": 4, "2.0": 1}


def test_a_job_removed_while_queued_leaves_the_trace_when_its_user_removed_it() -> None:
    """Not at the end of the observation: a replay would otherwise run it until then."""
    builder = TraceBuilder()
    builder.feed(
        [
            JobQueued(MONDAY, "1.0", "ann"),
            JobQueued(MONDAY, "2.0", "ann"),
            JobRemoved(MONDAY + H, "1.0"),
            AttemptStarted(MONDAY + 2 * H, "2.0", "ep1"),
            AttemptEnded(MONDAY + 3 * H, "2.0", "ep1", AttemptOutcome.REMOVED, MONDAY + 2 * H),
            OwnerSessionStarted(MONDAY + 30 * H, "ep1"),
        ]
    )
    jobs = builder.job_table()
    assert dict(zip(jobs.job_id, jobs.remove.tolist(), strict=True)) == {
        "1.0": MONDAY + H,
        "2.0": MONDAY + 3 * H,
    }


def test_a_job_removed_while_held_leaves_the_trace_at_its_hold() -> None:
    """Held after an hour's run and removed a day later, it ran no more after the hold; one
    held, released and run again before its removal is removed when its user removed it."""
    builder = TraceBuilder()
    builder.feed(
        [
            JobQueued(MONDAY, "1.0", "ann"),
            JobQueued(MONDAY, "2.0", "ann"),
            AttemptStarted(MONDAY + 60, "1.0", "ep1"),
            AttemptEnded(MONDAY + H, "1.0", "ep1", AttemptOutcome.HELD, MONDAY + 60),
            AttemptStarted(MONDAY + 60, "2.0", "ep2"),
            AttemptEnded(MONDAY + H, "2.0", "ep2", AttemptOutcome.HELD, MONDAY + 60),
            AttemptStarted(MONDAY + 2 * H, "2.0", "ep2"),  # released
            JobRemoved(MONDAY + 25 * H, "1.0"),
            AttemptEnded(MONDAY + 26 * H, "2.0", "ep2", AttemptOutcome.EVICTED_OWNER, MONDAY),
            JobRemoved(MONDAY + 27 * H, "2.0"),
        ]
    )
    jobs = builder.job_table()
    assert dict(zip(jobs.job_id, jobs.remove.tolist(), strict=True)) == {
        "1.0": MONDAY + H,
        "2.0": MONDAY + 27 * H,
    }
