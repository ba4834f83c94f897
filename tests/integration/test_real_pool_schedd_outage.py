"""On the real pool's two schedds, found through the collector: one that hangs, or leaves and
comes back, costs only the view of its own jobs; the other schedd and the machines' advice go on.

Before, the daemon counted the pool as lost while any schedd did not answer, so one access point
rebooting let the whole pool's advice lapse; and it asked the collector for the schedds once, so
one retired for good kept the advice lapsed until a restart, and one added later was never read.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from advisor.lab.daemon_process import DaemonProcess
from integration.conftest import DaemonStarter, wait_for
from integration.pool.pool import SECOND_SCHEDD, ChrootPool
from integration.test_real_pool_lapse import BOUND_S, MACHINES, held_everywhere, holding_daemon
from integration.test_real_pool_policies import metric
from plugins.contract.job_ids import split_schedd

pytestmark = pytest.mark.integration
NEVER_MATCHED = "executable = /bin/true\nrequirements = false\nqueue 1\n"
"""An idle job that stays idle."""


def second_schedd_pid() -> int:
    """The second schedd's own process (the oldest of that command line: not a query fork)."""
    found = subprocess.run(
        ["pgrep", "-o", "-f", "condor_schedd.* -local-name AP2"], capture_output=True, text=True
    )
    assert found.returncode == 0, "the test pool's second schedd is not running"
    return int(found.stdout.split()[0])


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    os.kill(pid, signal.SIGSTOP)  # it keeps its connections and answers nothing: a hung schedd
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def health(daemon: DaemonProcess) -> dict[str, object]:
    return dict(json.loads(daemon.get("/healthz")[2]))


def found_lines(daemon: DaemonProcess, name: str) -> int:
    return daemon.log().count(f"schedd {name} found: reading its jobs")


def test_a_schedd_that_hangs_costs_its_own_jobs_and_the_advice_goes_on(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    daemon = holding_daemon(start_daemon, tmp_path, call_timeout_s="2s")
    wait_for(held_everywhere, 40, "the holds published through the hook")
    assert found_lines(daemon, SECOND_SCHEDD) == 1
    with stopped(second_schedd_pid()):
        silent = [SECOND_SCHEDD]
        wait_for(lambda: health(daemon).get("schedds_unanswered") == silent, 30, "its silence")
        hung = time.monotonic()
        assert metric(daemon.get("/metrics")[2], "advisor_schedds_unanswered") == 1.0
        while time.monotonic() < hung + BOUND_S + 4:  # past the stale bound and a lifetime
            assert health(daemon)["advice_renewed"] is True, "the advice lapses"
            assert daemon.get(f"/advice/{MACHINES[0]}")[2] != ""
            time.sleep(1)
        assert held_everywhere()
        text = daemon.get("/metrics")[2]
        assert metric(text, "advisor_pool_healthy") == 1.0
        assert metric(text, "advisor_advice_stale") == 0.0
    said = f"schedd(s) {SECOND_SCHEDD} did not answer; advice goes on with their last known queue"
    assert said in daemon.log()
    wait_for(lambda: "every schedd answers again" in daemon.log(), 90, "the schedd back")
    assert "Traceback" not in daemon.log()


def test_a_schedd_that_leaves_and_returns_is_read_again(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    daemon = holding_daemon(start_daemon, tmp_path)
    wait_for(held_everywhere, 40, "the holds published through the hook")
    assert found_lines(daemon, SECOND_SCHEDD) == 1
    os.kill(second_schedd_pid(), signal.SIGTERM)  # it takes its ad out; the master restarts it
    left = f"schedd {SECOND_SCHEDD} left the collector"
    wait_for(lambda: left in daemon.log(), 60, "the daemon to see it leave")
    assert health(daemon)["advice_renewed"] is True
    wait_for(lambda: found_lines(daemon, SECOND_SCHEDD) == 2, 90, "the daemon to find it again")
    out = idle_pool.submit(NEVER_MATCHED, SECOND_SCHEDD)  # its jobs reach the daemon again
    cluster = out.split("submitted to cluster ")[1].split(".")[0]
    journal = tmp_path / "state/condor-journal/events.jsonl"

    def queued() -> list[tuple[str, str]]:
        lines = journal.read_text().splitlines() if journal.exists() else []
        events = [json.loads(line) for line in lines]
        ids = [split_schedd(e["job_id"]) for e in events if e["kind"] == "JobQueued"]
        return [i for i in ids if i == (f"{cluster}.0", SECOND_SCHEDD)]

    wait_for(queued, 60, "its new job in the daemon's journal")
    idle_pool.run("condor_rm", "-name", SECOND_SCHEDD, "-all", check=False)
    assert "Traceback" not in daemon.log()
