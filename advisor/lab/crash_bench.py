"""Crash the twin with SIGKILL at random moments and check every restart resumes from a valid
snapshot, losing at most one snapshot interval of learning; then finish and compare the figures
with an uninterrupted run."""

from __future__ import annotations

import json
import re
import signal
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from advisor.daemon.state_store import StateStore
from advisor.lab.daemon_process import DaemonProcess

RESUMED = re.compile(r"resumed from (snapshot-\d+\.json) \(saved at ([\dT:Z-]+)")
STOPPED = re.compile(r"stopped at simulated ([\dT:Z-]+)")


def _epoch(logged: str) -> float:
    """A time as the daemon logs it (ISO 8601 UTC) in seconds since the epoch."""
    return datetime.fromisoformat(logged).timestamp()


@dataclass
class CrashReport:
    kills: int = 0
    resumed: int = 0
    fresh_starts: int = 0
    corrupt_skipped: int = 0
    lost_s: list[float] = field(default_factory=list)
    clock_at_kill: float | None = None
    final: dict | None = None
    reference: dict | None = None


def _health(daemon: DaemonProcess) -> dict:
    return json.loads(daemon.get("/healthz")[2])


def _serving(daemon: DaemonProcess) -> bool:
    return daemon.address is not None and _health(daemon)["cycles"] > 0


def _live_and_die(
    args: list[str], state: Path, rng: np.random.Generator, report: CrashReport
) -> tuple[float | None, str]:
    """Start the twin, wait until it serves and has a snapshot, SIGKILL it at a random moment."""
    daemon = DaemonProcess(args)
    daemon.wait_for(lambda: _serving(daemon), timeout=120)
    match = daemon.wait_for(lambda: RESUMED.search(daemon.log()) or "fresh" in daemon.log())
    daemon.wait_for(lambda: StateStore(state).snapshots(), timeout=120)
    time.sleep(float(rng.uniform(0.2, 2.0)))
    report.clock_at_kill = _health(daemon)["now"]
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.finish()
    report.kills += 1
    resumed_at = _epoch(match.group(2)) if isinstance(match, re.Match) else None
    return resumed_at, daemon.log()


def _account(
    report: CrashReport, resumed_at: float | None, last_clock: float | None, log: str
) -> None:
    report.corrupt_skipped += log.count("skipping corrupt snapshot")
    if resumed_at is None:
        report.fresh_starts += 1
        return
    report.resumed += 1
    if last_clock is not None:
        report.lost_s.append(last_clock - resumed_at)


def crash_twin(
    twin_args: list[str], work: Path, kills: int, speed: float, seed: int
) -> CrashReport:
    """``twin_args``: the pool and policy arguments of ``htcondor-advisor run``."""
    rng = np.random.default_rng(seed)
    state, report = work / "state", CrashReport()
    args = [*twin_args, "--state-dir", str(state), "--no-progress"]
    last_clock: float | None = None
    for _ in range(kills):
        resumed_at, log = _live_and_die(
            [*args, "--speed", str(speed), "--out", str(work / "crashed")], state, rng, report
        )
        _account(report, resumed_at, last_clock, log)
        last_clock = report.clock_at_kill
    final = DaemonProcess([*args, "--speed", "max", "--out", str(work / "crashed")])
    if final.finish(timeout=600) != 0:
        raise RuntimeError(f"final run failed:\n{final.log()}")
    match = RESUMED.search(final.log())
    _account(report, _epoch(match.group(2)) if match else None, last_clock, final.log())
    report.final = json.loads((work / "crashed" / "summary.json").read_text())
    report.reference = _reference(twin_args, work)
    return report


def _reference(twin_args: list[str], work: Path) -> dict:
    """The uninterrupted run's summary."""
    reference = DaemonProcess(
        [*twin_args, "--speed", "max", "--no-progress", "--out", str(work / "reference")]
    )
    if reference.finish(timeout=600) != 0:
        raise RuntimeError(f"reference run failed:\n{reference.log()}")
    summary: dict = json.loads((work / "reference" / "summary.json").read_text())
    return summary


def stop_halfway(twin_args: list[str], work: Path, speed: float) -> CrashReport:
    """SIGTERM once the twin's clock is past half its span, restart, finish, compare."""
    report = CrashReport()
    args = [*twin_args, "--state-dir", str(work / "state"), "--no-progress"]
    args += ["--out", str(work / "stopped")]
    daemon = DaemonProcess([*args, "--speed", str(speed)])
    start = daemon.wait_for(lambda: _serving(daemon) and _health(daemon)["now"], timeout=120)
    days = float(twin_args[twin_args.index("--days") + 1])
    daemon.wait_for(lambda: _health(daemon)["now"] >= start + days * 43200, timeout=600)
    daemon.proc.send_signal(signal.SIGTERM)
    if daemon.finish() != 0:
        raise RuntimeError(f"SIGTERM did not exit 0:\n{daemon.log()}")
    report.kills, report.clock_at_kill = 1, _stopped_clock(daemon.log())
    final = DaemonProcess([*args, "--speed", "max"])
    if final.finish(timeout=600) != 0:
        raise RuntimeError(f"resumed run failed:\n{final.log()}")
    match = RESUMED.search(final.log())
    _account(report, _epoch(match.group(2)) if match else None, report.clock_at_kill, final.log())
    report.final = json.loads((work / "stopped" / "summary.json").read_text())
    report.reference = _reference(twin_args, work)
    return report


def _stopped_clock(log: str) -> float | None:
    """The simulated time the stopped twin logged ("stopped at simulated T")."""
    match = STOPPED.search(log)
    return _epoch(match.group(1)) if match else None
