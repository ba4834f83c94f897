"""On the multi-host pool: an experiment's replays as HTCondor jobs (``--executor condor``), run by
a user on the central manager with the installation shared to every host at the same path.

The sweep gives the local run's CSV byte for byte, its jobs ran on the execute points, an
interrupted sweep resumes with only its unfinished tasks, a task that fails ends the sweep with
its error, and a pool's own jobs (``experiment shapes --jobs``) travel inside each task.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from integration.conftest import wait_for
from integration.pool.hosts import CM, HostsPool
from integration.pool.pool import DOMAIN, PROJECT
from integration.test_hosts_pool import running_hosts_pool

pytestmark = pytest.mark.hosts

LEVELS = [
    "experiment",
    "levels",
    "--scale",
    "0.02",
    "--days",
    "14",
    "--epsilons",
    "0.1",
    "--sigmas",
    "0.4",
]
ON_POOL = ["--executor", "condor", "--request-memory", "768"]
HOME = Path("/home/tester")


def installation() -> list[Path]:
    """What a site shares with its execute points for ``--executor condor``: this Python
    environment, its base interpreter (and the project, for an editable install)."""
    base = Path(sys.base_prefix)
    if base == Path("/usr"):  # a distribution's Python: its library and its binary only
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        paths = [base / "lib" / version, Path(sys.executable).resolve()]
    else:
        paths = [base]
    return [PROJECT, Path(sys.prefix), *paths]


@pytest.fixture(scope="module")
def pool() -> Iterator[HostsPool]:
    paths = installation()
    outermost = [p for p in paths if not any(shared in p.parents for shared in paths)]
    with running_hosts_pool(shared=outermost) as pool:
        shutil.rmtree(pool.host_path(str(HOME)), ignore_errors=True)  # an earlier run's sweeps
        pool.run(CM, "mkdir", "-p", str(HOME))
        pool.run(CM, "chown", "tester:tester", str(HOME))
        yield pool


def advisor(pool: HostsPool, out: str, *args: str, experiment: list[str] = LEVELS) -> list[str]:
    """``htcondor-advisor`` run by the user ``tester`` on the central manager."""
    command = [f"{sys.prefix}/bin/htcondor-advisor", *experiment, "--out", str(HOME / out), *args]
    return pool.command(CM, ["sh", "-c", 'cd && exec "$@"', "sh", *command], user="tester")


def finish(
    pool: HostsPool, out: str, *args: str, experiment: list[str] = LEVELS
) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    command = advisor(pool, out, *args, experiment=experiment)
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    print(f"{out}: {time.monotonic() - started:.1f} s wall, exit {run.returncode}")
    return run


def csvs(pool: HostsPool, out: str) -> dict[str, bytes]:
    folder = pool.host_path(str(HOME / out))
    return {name: (folder / name).read_bytes() for name in ("levels_grid.csv", "levels.csv")}


def sweep(pool: HostsPool, out: str) -> list[dict[str, str]]:
    manifest = pool.host_path(str(HOME / out / "sweep/sweep.json"))
    return list(json.loads(manifest.read_text())["tasks"]) if manifest.exists() else []


@pytest.fixture(scope="module")
def local(pool: HostsPool) -> dict[str, bytes]:
    """The local run's CSVs, on the same host (the central manager)."""
    run = finish(pool, "local", "--workers", "2")
    assert run.returncode == 0, run.stderr
    return csvs(pool, "local")


def test_a_sweep_on_the_pool_gives_the_local_csv_byte_for_byte(
    pool: HostsPool, local: dict[str, bytes]
) -> None:
    run = finish(pool, "pooled", *ON_POOL)
    assert run.returncode == 0, run.stderr
    assert "submitting 5 of 5 tasks (0 done)" in run.stdout
    assert csvs(pool, "pooled") == local
    hosts = {task["task"].split(",")[0]: task["host"] for task in sweep(pool, "pooled")}
    print("\n".join(f"{task}: {host}" for task, host in hosts.items()))
    assert {h.split("@")[-1] for h in hosts.values()} <= {f"ep1.{DOMAIN}", f"ep2.{DOMAIN}"}
    print_overheads(pool.host_path(str(HOME / "pooled/sweep/jobs.log")))


def print_overheads(log: Path) -> None:
    """Per task, from the job event log: submit to start, start to end (the benchmark)."""
    import htcondor2

    times: dict[int, dict[str, int]] = {}
    kinds = {"SUBMIT": "submit", "EXECUTE": "start", "JOB_TERMINATED": "end"}
    for event in htcondor2.JobEventLog(str(log)).events(stop_after=0):
        if event.type.name in kinds:
            times.setdefault(event.proc, {})[kinds[event.type.name]] = event.timestamp
    for proc, t in sorted(times.items()):
        print(f"task {proc}: submit->start {t['start'] - t['submit']} s, "
              f"start->result {t['end'] - t['start']} s")  # fmt: skip


def interruptible() -> None:
    """Ctrl-C as in a terminal: a test run started in the background (``cmd &`` in a script)
    inherits SIGINT ignored, and Python then never raises KeyboardInterrupt for it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_sweep_resumes_with_only_its_unfinished_tasks(
    pool: HostsPool, local: dict[str, bytes]
) -> None:
    command = advisor(pool, "resumed", *ON_POOL, "--max-idle", "2")
    first = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    assert first.stdin is not None
    first.stdin.write("y\n")  # the answer to "Remove this sweep's other jobs?"
    first.stdin.flush()
    done = wait_for(
        lambda: sum(t["state"] == "done" for t in sweep(pool, "resumed")), 300, "a task done"
    )
    first.send_signal(signal.SIGINT)
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 2 and "removed" in out
    queued = pool.run(
        CM, "condor_q", "-allusers", "-const", "JobStatus != 3", "-af", "AdvisorSweep"
    )
    assert "resumed" not in queued
    again = finish(pool, "resumed", *ON_POOL)
    assert again.returncode == 0, again.stderr
    finished = int(re.findall(r"submitting (\d) of 5 tasks \((\d) done\)", again.stdout)[0][1])
    assert finished >= done and finished < 5
    assert csvs(pool, "resumed") == local


def test_a_failing_task_ends_the_sweep_with_its_error(pool: HostsPool) -> None:
    run = finish(pool, "failing", *ON_POOL, "--sigmas=-1")
    assert run.returncode == 2
    (line,) = [x for x in run.stderr.splitlines() if x.startswith("htcondor-advisor")]
    assert "4 of 5 tasks failed" in line
    assert "option sigma='-1.0': must be between 0 and 1" in line


def test_a_pools_own_jobs_travel_inside_each_task_to_the_execute_points(pool: HostsPool) -> None:
    # `experiment shapes --jobs`: the file is read on the central manager only; each task
    # carries its jobs to an execute point (the hosts share one chroot here, so the tasks are
    # checked not to name the file: a site's execute points need not see it)
    jobs = HOME / "history-jobs.csv"
    rows = ["submit,job_id,user,runtime,remove", "1262592000,1.0,alice,3600,"]
    rows += ["1262592060,1.1,alice,3600,", "1262595000,2.0,bob,,1262599000"]
    pool.host_path(str(jobs)).write_text("\n".join(rows) + "\n")
    shapes = ["experiment", "shapes", "--shapes", "campus", "--scales", "1", "--seeds", "1"]
    shapes += ["--days", "7", "--policies", "frugal", "--jobs", str(jobs)]
    local = finish(pool, "shapes-local", "--workers", "2", experiment=shapes)
    assert local.returncode == 0, local.stderr
    pooled = finish(pool, "shapes-pooled", *ON_POOL, experiment=shapes)
    assert pooled.returncode == 0, pooled.stderr
    assert "submitting 3 of 3 tasks (0 done)" in pooled.stdout
    tables = [
        pool.host_path(str(HOME / out / "shapes_runs.csv")).read_text()
        for out in ("shapes-local", "shapes-pooled")
    ]
    assert tables[0] == tables[1]
    runs = list(csv.DictReader(io.StringIO(tables[1])))
    assert {(r["policy"], r["jobs_submitted"]) for r in runs} == {
        ("random", "3"),
        ("crystal", "3"),
        ("frugal", "3"),
    }  # the file's three jobs, not the member's own
    hosts = {task["host"].split("@")[-1] for task in sweep(pool, "shapes-pooled")}
    assert hosts <= {f"ep1.{DOMAIN}", f"ep2.{DOMAIN}"}, hosts
    tasks = list(pool.host_path(str(HOME / "shapes-pooled/sweep")).glob("*/task.pickle"))
    assert len(tasks) == 3 and not any(jobs.name.encode() in t.read_bytes() for t in tasks)
