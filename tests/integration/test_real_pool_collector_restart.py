"""On the real pool: a collector that restarts knows no ad until each daemon sends its own again
(every ``UPDATE_INTERVAL``, 300 s by default), so for a while every machine and schedd is
missing from it. The daemon took that for the whole pool switched off (a ``MachinePowerChanged``
off for every machine, its owner sessions ended, the idle policies' history cut) and every schedd
retired; now a collector younger than ``pool.collector_settles_s`` is taken to miss ads."""

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

from advisor.condor.factory import COLLECTOR_START, collector_start
from integration.conftest import SETTLES_S, DaemonStarter, wait_for
from integration.pool.pool import ChrootPool
from integration.test_real_pool_lapse import held_everywhere, holding_daemon

pytestmark = pytest.mark.integration


def pids(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


@contextmanager
def silenced(processes: list[int]) -> Iterator[None]:
    """The processes stopped: they send no ad until the block ends."""
    for pid in processes:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in processes:
            os.kill(pid, signal.SIGCONT)


def collector_age(pool: ChrootPool) -> float:
    """How long ago the collector started, as the daemon reads it (0: it does not answer)."""
    out = pool.run("condor_status", "-collector", "-af", *COLLECTOR_START, check=False).split()
    if len(out) != 2 or not all(v.isdigit() for v in out):
        return 0.0
    started = collector_start(dict(zip(COLLECTOR_START, map(int, out), strict=True)))
    return 0.0 if started is None else time.time() - started


def held_again() -> bool:
    try:
        return held_everywhere()
    except Exception:  # (the new collector may refuse a query while it starts: asked again)
        return False


def test_a_restarted_collector_is_not_a_pool_switched_off(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    daemon = holding_daemon(start_daemon, tmp_path)
    wait_for(held_everywhere, 40, "the holds published through the hook")
    wait_for(lambda: collector_age(idle_pool) > SETTLES_S, 30, "a collector past its settling")
    journal = tmp_path / "state/condor-journal/events.jsonl"
    before = len(journal.read_text().splitlines()) if journal.exists() else 0
    daemons = pids("condor_startd") + pids("condor_schedd")
    assert len(daemons) >= 6, "four startds and two schedds"
    with silenced(daemons):  # no ad reaches the new collector until they go on
        idle_pool.run("condor_off", "-daemon", "COLLECTOR")
        idle_pool.run("condor_on", "-daemon", "COLLECTOR")
        wait_for(lambda: 0 < collector_age(idle_pool) < SETTLES_S, 30, "the new collector")
        time.sleep(6)  # three of the daemon's polls of a collector that knows nobody
    wait_for(held_again, 60, "the holds back in every startd's ad")
    lines = journal.read_text().splitlines()[before:] if journal.exists() else []
    offs = [e for e in map(json.loads, lines) if e["kind"] == "MachinePowerChanged"]
    assert offs == [], f"the restart taken for machines switched off: {offs}"
    assert "left the collector" not in daemon.log()
    assert "Traceback" not in daemon.log()
