"""``--executor condor``: each missing task of a sweep as one HTCondor job, followed through the
sweep's job event log until every task has an answer (docs/sweeps.md).

One ``Submit`` with item data (one item per task, ``max_materialize`` bounding the queue) runs
``advisor.lab.sweep.job_main`` with the submitter's own Python (a shared environment). A job that
ends with an error or is held fails its task at once (its message and stderr shown, a held job
removed) and the others go on; a sweep with failed tasks ends with a one-line error and the
same command run again submits only those and the ones never finished. Ctrl-C asks before
removing the sweep's jobs; what finished stays.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from advisor.lab.progress import terminal_bar
from advisor.lab.sweep.record import DONE, FAILED, SUBMITTED, SweepError, SweepRecord

JOB_MAIN = "advisor.lab.sweep.job_main"


@dataclass(frozen=True)
class PoolOptions:
    """Where and how the jobs run (``--schedd``, ``--request-cpus``, ``--request-memory``,
    ``--python``, ``--max-idle``)."""

    schedd: str | None = None
    request_cpus: int = 1
    request_memory_mb: int = 2048
    python: str = sys.executable
    max_materialize: int = 100


def locate_schedd(name: str | None) -> Any:
    import htcondor2

    if name is None:
        return htcondor2.Schedd()
    collector = htcondor2.Collector()
    return htcondor2.Schedd(collector.locate(htcondor2.DaemonTypes.Schedd, name))


def sweep_tag(record: SweepRecord) -> str:
    """The ClassAd string literal naming this sweep's jobs (``AdvisorSweep``)."""
    return json.dumps(str(record.root.resolve()))


def description(record: SweepRecord, options: PoolOptions, desc: str) -> Any:
    import htcondor2

    root = record.root.resolve()
    return htcondor2.Submit(
        {
            "universe": "vanilla",
            "executable": options.python,
            "transfer_executable": "false",
            "arguments": f"-m {JOB_MAIN} task.pickle result.pickle",
            "initialdir": f"{root}/$(task)",
            "should_transfer_files": "YES",
            "when_to_transfer_output": "ON_EXIT",
            "transfer_input_files": "task.pickle",
            "transfer_output_files": "result.pickle",
            "output": "stdout",
            "error": "stderr",
            "log": str(root / "jobs.log"),
            "request_cpus": str(options.request_cpus),
            "request_memory": str(options.request_memory_mb),
            "max_materialize": str(options.max_materialize),
            "batch_name": f"advisor-{desc}",
            "My.AdvisorSweep": sweep_tag(record),
            "My.AdvisorSweepTask": '"$(task)"',
        }
    )


def remove_jobs(schedd: Any, record: SweepRecord) -> int:
    """Remove this sweep's jobs still in the queue; how many there were."""
    import htcondor2

    constraint = f"AdvisorSweep == {sweep_tag(record)} && JobStatus != 3 && JobStatus != 4"
    queued = schedd.query(constraint, ["ClusterId"])
    if queued:
        schedd.act(htcondor2.JobAction.Remove, constraint)
    return len(queued)


def submit(
    schedd: Any, record: SweepRecord, todo: Sequence[str], options: PoolOptions, desc: str
) -> dict[tuple[int, int], str]:
    """Submit ``todo``; their jobs as (cluster, proc) -> task id (procs follow the item order)."""
    for tid in todo:
        for stale in ("result.pickle", "stdout", "stderr"):
            (record.root / tid / stale).unlink(missing_ok=True)
    log = record.root / "jobs.log"  # a new log: the schedd may reuse an old job's id
    log.unlink(missing_ok=True)
    log.touch()
    result = schedd.submit(
        description(record, options, desc), itemdata=iter([{"task": t} for t in todo])
    )
    cluster = result.cluster()
    for proc, tid in enumerate(todo):
        record.mark(tid, SUBMITTED, job=f"{cluster}.{proc}")
    return {(cluster, proc): tid for proc, tid in enumerate(todo)}


def run_on_pool(
    fn: Callable[[Any], Any], tasks: Sequence[Any], root: Path, options: PoolOptions, desc: str
) -> list[Any]:
    """``[fn(t) for t in tasks]``, each missing one as a job; the results recorded in ``root``."""
    record = SweepRecord.open(root, fn, tasks)
    todo = record.missing()
    if todo:
        try:
            schedd = locate_schedd(options.schedd)
            left = remove_jobs(schedd, record)
        except Exception as exc:  # htcondor2's own errors: no schedd, no configuration
            raise SweepError(
                f"--executor condor: cannot reach the schedd ({str(exc).strip()}); run where "
                "condor_submit works, or name the schedd with --schedd"
            ) from None
        if left:
            print(f"removed {left} jobs of an earlier run of this sweep (submitted again)")
        print(f"submitting {len(todo)} of {len(tasks)} tasks ({len(tasks) - len(todo)} done)")
        jobs = submit(schedd, record, todo, options, desc)
        try:
            follow(schedd, record, jobs, desc)
        except KeyboardInterrupt:
            interrupted(schedd, record)
            raise SweepError(
                f"interrupted; {record.progress()}: run the same command again"
            ) from None
    failed = [tid for tid in record.ids if record.entries[tid]["state"] == FAILED]
    if failed:
        first = record.entries[failed[0]]
        raise SweepError(
            f"{len(failed)} of {len(tasks)} tasks failed, first {first['task']}: {first['error']} "
            f"(stderr in {root / failed[0] / 'stderr'}); fix it and run the same command again"
        )
    return record.values()


def follow(schedd: Any, record: SweepRecord, jobs: dict[tuple[int, int], str], desc: str) -> None:
    """Read the event log until every job in ``jobs`` ended (terminated, held or removed)."""
    import htcondor2

    kinds = htcondor2.JobEventType
    pending = dict(jobs)
    done = len(record.ids) - len(jobs)
    log = htcondor2.JobEventLog(str(record.root.resolve() / "jobs.log"))
    total = len(record.ids)
    with terminal_bar(total=total, initial=done, desc=desc, unit="task", leave=False) as bar:
        while pending:
            for event in log.events(stop_after=1):
                tid = pending.get((event.cluster, event.proc))
                if tid is None:
                    continue
                if event.type == kinds.EXECUTE:
                    host = execute_host(event)
                    record.mark(tid, SUBMITTED, job=record.entries[tid]["job"], host=host)
                    continue
                if event.type == kinds.JOB_TERMINATED:
                    ended(record, tid, event.get("ReturnValue"))
                elif event.type == kinds.JOB_HELD:
                    schedd.act(htcondor2.JobAction.Remove, [f"{event.cluster}.{event.proc}"])
                    failed(record, tid, f"held: {event.get('HoldReason', 'no reason given')}")
                elif event.type == kinds.JOB_ABORTED:
                    failed(record, tid, "removed from the queue")
                else:
                    continue
                del pending[(event.cluster, event.proc)]
                bar.update()


def execute_host(event: Any) -> str:
    """The slot (or the host's name in the starter's address) an execute event names."""
    if event.get("SlotName"):
        return str(event["SlotName"])
    address = str(event.get("ExecuteHost", "?"))
    alias = re.search(r"alias=([^&>]+)", address)
    return alias.group(1) if alias else address


def ended(record: SweepRecord, tid: str, code: Any) -> None:
    outcome = record.result(tid)
    if outcome is not None and outcome[0] == "ok":
        entry = record.entries[tid]
        record.mark(tid, DONE, job=entry.get("job", ""), host=entry.get("host", ""))
    elif outcome is not None:
        failed(record, tid, str(outcome[1]))
    else:
        failed(record, tid, f"exited with {code} and sent no result")


def failed(record: SweepRecord, tid: str, why: str) -> None:
    entry = record.entries[tid]
    record.mark(tid, FAILED, job=entry.get("job", ""), error=why)
    tail = record.stderr_tail(tid)
    tqdm.write(f"task {entry['task']} failed: {why}" + (f"\n{tail}" if tail else ""))


def interrupted(schedd: Any, record: SweepRecord) -> None:
    """Ctrl-C: ask (Enter = yes), then remove the sweep's jobs; finished results stay."""
    try:
        answer = input(
            f"\n{record.progress()}. Remove this sweep's other jobs from the queue? [Y/n] "
        )
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() in ("", "y", "yes"):
        print(f"removed {remove_jobs(schedd, record)} jobs")
