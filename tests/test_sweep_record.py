"""The sweep directory and the job's entry point without a pool: a task's id is stable, its
result file decides what is done, a failed or lost task is submitted again, and the job always
leaves an answer (the value, or its error in one line, with the traceback on stderr). A local
sweep keeps each result as it arrives, and results of other code are never reused."""

from __future__ import annotations

import contextlib
import json
import math
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.lab.sweep import record as sweep_record
from advisor.lab.sweep.local_run import run_locally
from advisor.lab.sweep.record import (
    DONE,
    FAILED,
    PENDING,
    SUBMITTED,
    SweepRecord,
    files_digest,
    task_id,
)

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


class Planted:
    """What the root of an execute point could put in a result: code run on reading it."""

    def __reduce__(self) -> tuple[object, tuple[Path, str]]:
        return (Path.write_text, (Path("planted"), "ran"))  # (any callable, any arguments)


def test_a_result_is_read_as_data_and_never_runs_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    record = SweepRecord.open(tmp_path / "sweep", math.sqrt, [16.0])
    (tid,) = record.ids
    (tmp_path / "sweep" / tid / "result.pickle").write_bytes(pickle.dumps(("ok", Planted())))
    state, said = record.result(tid)  # type: ignore[misc]
    assert state == "error" and "pathlib" in said and "is not data" in said
    assert not (tmp_path / "planted").exists()


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


def counted_sqrt(task: tuple[str, float]) -> float:
    """``math.sqrt`` noting each call in its folder; it fails on 9 while ``broken`` is there."""
    folder, x = Path(task[0]), task[1]
    with (folder / "calls").open("a") as calls:
        calls.write(f"{x}\n")
    if x == 9.0 and (folder / "broken").exists():
        raise RuntimeError("broken")
    return math.sqrt(x)


def calls(folder: Path) -> list[str]:
    return (folder / "calls").read_text().split()


def test_a_local_sweep_keeps_each_result_and_runs_only_what_is_missing(tmp_path: Path) -> None:
    tasks = [(str(tmp_path), x) for x in TASKS]
    sweep = tmp_path / "sweep"
    (tmp_path / "broken").touch()
    with pytest.raises(RuntimeError, match="broken"):
        run_locally(counted_sqrt, tasks, sweep, workers=1, desc="test")
    kept = SweepRecord.open(sweep, counted_sqrt, tasks)
    assert kept.missing() == [task_id(counted_sqrt, tasks[2])]  # the two before it were kept
    (tmp_path / "broken").unlink()
    assert run_locally(counted_sqrt, tasks, sweep, workers=1, desc="test") == [1.0, 2.0, 3.0]
    assert calls(tmp_path) == ["1.0", "4.0", "9.0", "9.0"]
    assert run_locally(counted_sqrt, [*tasks, (str(tmp_path), 16.0)], sweep, 1, "test") == [
        1.0, 2.0, 3.0, 4.0
    ]  # fmt: skip
    assert calls(tmp_path) == ["1.0", "4.0", "9.0", "9.0", "16.0"]


def test_worker_processes_keep_their_results_too(tmp_path: Path) -> None:
    tasks = [(str(tmp_path), x) for x in TASKS]
    assert run_locally(counted_sqrt, tasks, tmp_path / "sweep", workers=2, desc="test") == [
        1.0, 2.0, 3.0
    ]  # fmt: skip
    assert SweepRecord.open(tmp_path / "sweep", counted_sqrt, tasks).missing() == []
    run_locally(counted_sqrt, tasks, tmp_path / "sweep", workers=2, desc="test")
    assert sorted(calls(tmp_path)) == ["1.0", "4.0", "9.0"]


def test_a_damaged_manifest_keeps_the_results(tmp_path: Path) -> None:
    # sweep.json edited by hand into garbage gave a JSONDecodeError traceback
    tasks = [(str(tmp_path), x) for x in TASKS]
    run_locally(counted_sqrt, tasks, tmp_path / "sweep", workers=1, desc="test")
    (tmp_path / "sweep" / "sweep.json").write_text("garbage")
    assert run_locally(counted_sqrt, tasks, tmp_path / "sweep", 1, "test") == [1.0, 2.0, 3.0]
    assert sorted(calls(tmp_path)) == ["1.0", "4.0", "9.0"]  # nothing replayed again


def test_results_of_other_code_are_not_taken_for_this_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "plugins"
    (package / "__pycache__").mkdir(parents=True)
    (package / "policy.py").write_text("LIMIT = 1\n")
    before = files_digest([package])
    (package / "__pycache__" / "policy.cpython-311.pyc").write_bytes(b"bytecode")
    assert files_digest([package]) == before  # compiling is not a change
    (package / "policy.py").write_text("LIMIT = 2\n")
    assert files_digest([package]) != before
    ours = task_id(math.sqrt, 1.0)
    monkeypatch.setattr(sweep_record, "files_digest", lambda roots: "another-version")
    sweep_record.code_fingerprint.cache_clear()
    try:
        assert task_id(math.sqrt, 1.0) != ours
    finally:
        monkeypatch.undo()
        sweep_record.code_fingerprint.cache_clear()
    assert task_id(math.sqrt, 1.0) == ours


NAPS = """
import time


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds
"""
DRIVER = """
import signal, sys
from pathlib import Path
from advisor.lab.sweep.local_run import run_locally
from advisor.lab.sweep.record import SweepError
from naps import nap

signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
try:
    run_locally(nap, [0.1, 0.2, 600.0, 601.0, 602.0, 603.0], Path(sys.argv[1]), 2, "naps")
except SweepError as exc:
    sys.exit(f"error: {exc}")
"""


def test_ctrl_c_stops_a_local_sweep_at_once_and_keeps_what_finished(tmp_path: Path) -> None:
    (tmp_path / "naps.py").write_text(NAPS)
    sweep = tmp_path / "sweep"
    run = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(sweep)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for _ in range(300):  # the two short naps recorded, the long ones running
            if states(sweep)[:2] == [DONE, DONE]:
                break
            time.sleep(0.1)
        os.killpg(run.pid, signal.SIGINT)
        _, stderr = run.communicate(timeout=30)
        assert run.returncode == 1 and "interrupted; 2 of 6 tasks done" in stderr, stderr
        for _ in range(100):  # the workers end with it, not ten minutes later
            os.killpg(run.pid, 0)  # ProcessLookupError: none of the group is left
            time.sleep(0.1)
        raise AssertionError("a worker outlived the interrupted sweep")
    except ProcessLookupError:
        pass
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
    assert states(sweep) == [DONE, DONE, PENDING, PENDING, PENDING, PENDING]


def states(sweep: Path) -> list[str]:
    """The tasks' states in ``sweep.json`` (none before the sweep has written it)."""
    manifest = sweep / "sweep.json"
    tasks = json.loads(manifest.read_text())["tasks"] if manifest.exists() else []
    return [task["state"] for task in tasks]
