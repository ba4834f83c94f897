"""On the real pool: ``condor_history``'s account of two jobs that completed and one its user
removed, saved as ``-json``, ``-jsonl``, ``-xml``, ``-long``, an ``-af:h`` table and as the
schedd's history file itself, is read by ``trace history`` as the same three jobs, which then
replay on the campus."""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.lab.history_trace import ATTRIBUTES
from integration.conftest import first_schedd, pool_state, wait_for
from integration.pool.pool import ChrootPool
from simulator.traces import read_jobs

pytestmark = pytest.mark.integration
SLEEP = (
    "executable = /bin/sleep\narguments = {seconds}\nshould_transfer_files = NO\n"
    "request_memory = 64\n+AdvisorHistoryTest = {tag}\n"
)


def _jobs_of(history: Path, out: Path, tag: int, ids: set[str]) -> dict[str, tuple[object, ...]]:
    assert main(["trace", "history", str(history), "--out", str(out)]) == 0
    jobs = read_jobs(out / "jobs.csv")
    columns = (jobs.user, jobs.submit, jobs.runtime, jobs.remove, jobs.cpus, jobs.memory_mb)
    rows = {j: tuple(c[i] for c in columns) for i, j in enumerate(jobs.job_id)}
    return {j: rows[j] for j in ids}


def test_a_real_history_reads_alike_in_every_saved_form_and_replays(
    idle_pool: ChrootPool, tmp_path: Path
) -> None:
    tag = time.monotonic_ns() % 10**9
    test = f"AdvisorHistoryTest == {tag}"
    idle_pool.submit(SLEEP.format(seconds=3, tag=tag) + "queue 2\n")
    idle_pool.submit(
        SLEEP.format(seconds=600, tag=tag) + "requirements = false\n+AdvisorRemoveMe = true\n"
        "queue 1\n"
    )
    idle_pool.run("condor_rm", "-constraint", f"{test} && AdvisorRemoveMe", user="tester")

    def statuses() -> list[str]:
        out = idle_pool.run("condor_history", "-constraint", test, "-af", "JobStatus")
        return sorted(out.split())

    why = partial(pool_state, idle_pool)
    wait_for(lambda: statuses() == ["3", "4", "4"], 90, "2 completed, 1 removed", explain=why)
    saved = {form: tmp_path / f"history.{form}" for form in ("json", "jsonl", "xml", "long")}
    for form, path in saved.items():
        path.write_text(idle_pool.run("condor_history", f"-{form}", "-constraint", test))
    saved["af"] = tmp_path / "history.af"
    table = idle_pool.run("condor_history", "-constraint", test, "-af:h", *ATTRIBUTES)
    saved["af"].write_text(table)
    assert json.loads(saved["json"].read_text())  # as condor_history 25 writes it: an array
    saved["file"] = idle_pool.host_path(idle_pool.run("condor_config_val", "HISTORY").strip())

    ids_out = idle_pool.run("condor_history", "-constraint", test, "-af", "ClusterId", "ProcId")
    ids = {f"{c}.{p}@{first_schedd()}" for c, p in (line.split() for line in ids_out.splitlines())}
    found = {form: _jobs_of(path, tmp_path / form, tag, ids) for form, path in saved.items()}
    assert all(found[form] == found["json"] for form in saved), found
    rows = sorted(found["json"].values(), key=lambda row: float(row[2]))  # type: ignore[arg-type]
    assert [row[0] for row in rows] == ["tester"] * 3
    assert all(3 <= float(row[2]) < 60 for row in rows[:2])  # type: ignore[arg-type]
    assert [row[4] for row in rows] == [1, 1, 1] and [row[5] for row in rows] == [64.0] * 3
    removed = rows[2]
    assert removed[2] == float("inf") and 0 <= removed[3] - removed[1] < 120  # type: ignore[operator]

    replay = tmp_path / "replay"
    argv = ["replay", "--scenario", "campus", "--days", "7", "--scale", "0.02", "--no-progress"]
    assert main([*argv, "--jobs", str(tmp_path / "json" / "jobs.csv"), "--out", str(replay)]) == 0
    assert json.loads((replay / "summary.json").read_text())["jobs"]["submitted"] == 3
