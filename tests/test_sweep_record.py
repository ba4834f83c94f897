"""The sweep directory and the job's entry point without a pool: a task's id is stable, its
result file decides what is done, a failed or lost task is submitted again, and the job always
leaves an answer (the value, or its error in one line, with the traceback on stderr)."""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
from pathlib import Path

from advisor.lab.sweep.record import DONE, FAILED, SUBMITTED, SweepRecord, task_id

TASKS = [1.0, 4.0, 9.0]


def run_job(folder: Path) -> subprocess.CompletedProcess[str]:
    """What the execute point runs, in the task's folder as its scratch directory."""
    command = [sys.executable, "-m", "advisor.lab.sweep.job_main", "task.pickle", "result.pickle"]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)


def test_the_job_answers_with_the_value_or_the_error(tmp_path: Path) -> None:
    record = SweepRecord.open(tmp_path, math.sqrt, [16.0, -1.0])
    good, bad = (tmp_path / tid for tid in record.ids)
    assert run_job(good).returncode == 0
    assert record.result(record.ids[0]) == ("ok", 4.0)
    failed = run_job(bad)
    assert failed.returncode == 1 and "Traceback" in failed.stderr
    assert record.result(record.ids[1]) == ("error", "ValueError: math domain error")


def test_results_decide_what_is_done_and_the_rest_is_submitted_again(tmp_path: Path) -> None:
    record = SweepRecord.open(tmp_path, math.sqrt, TASKS)
    assert record.ids == [task_id(math.sqrt, t) for t in TASKS] and record.missing() == record.ids
    first, second, third = record.ids
    run_job(tmp_path / first)
    record.mark(second, SUBMITTED, job="7.1")  # its submitter ended before the job did
    record.mark(third, FAILED, job="7.2", error="held: boom")
    again = SweepRecord.open(tmp_path, math.sqrt, TASKS)
    assert again.entries[first]["state"] == DONE
    assert again.missing() == [second, third]
    manifest = json.loads((tmp_path / "sweep.json").read_text())
    assert [t["task"] for t in manifest["tasks"]] == ["1.0", "4.0", "9.0"]
    assert manifest["tasks"][2] == {
        "id": third, "task": "9.0", "state": FAILED, "job": "7.2", "error": "held: boom"
    }  # fmt: skip
    # the job of the second task ends later: the next run counts it without running it again
    run_job(tmp_path / second)
    (tmp_path / third / "result.pickle").write_bytes(pickle.dumps(("error", "ValueError: x")))
    later = SweepRecord.open(tmp_path, math.sqrt, TASKS)
    assert later.missing() == [third]
    run_job(tmp_path / third)
    assert SweepRecord.open(tmp_path, math.sqrt, TASKS).values() == [1.0, 2.0, 3.0]


def test_a_changed_grid_keeps_the_results_it_shares(tmp_path: Path) -> None:
    record = SweepRecord.open(tmp_path, math.sqrt, TASKS)
    for tid in record.ids:
        run_job(tmp_path / tid)
    grown = SweepRecord.open(tmp_path, math.sqrt, [*TASKS, 16.0])
    assert grown.missing() == [task_id(math.sqrt, 16.0)]
