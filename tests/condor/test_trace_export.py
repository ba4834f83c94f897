"""``trace export``: a journal of live observations becomes trace files the replay reads."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.condor.journal import Journal
from advisor.lab.journal_read import read_events
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.policy import MachineInfo
from simulator.traces import read_inventory, read_jobs, read_owner_sessions

T = 1_700_000_000.0
EVENTS: list[Event] = [
    JobQueued(T, "1.0", "alice"),
    JobQueued(T + 1, "2.0", "bob", 0, 0.0),
    AttemptStarted(T + 10, "1.0", "pc1"),
    OwnerSessionStarted(T + 50, "pc1"),
    AttemptEnded(T + 51, "1.0", "pc1", AttemptOutcome.EVICTED_OWNER, T + 10, 57.0),
    MachinePowerChanged(T + 60, "pc2", PowerState.SLEEP),
    AttemptStarted(T + 70, "1.0", "pc2"),
    OwnerSessionEnded(T + 90, "pc1"),
    AttemptEnded(T + 170, "1.0", "pc2", AttemptOutcome.COMPLETED, T + 70, 57.0),
    AttemptStarted(T + 180, "2.0", "pc1"),
    OwnerSessionStarted(T + 200, "pc2"),
]


def test_journal_round_trips_and_exports_a_replayable_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "state"
    journal = Journal(state)
    journal.save_machines(
        {n: MachineInfo(n, "lab", "Normal", 57.0, 40.0, 2.0) for n in ("pc1", "pc2")}
    )
    journal.append(EVENTS[:5], EVENTS[4].time)
    journal.append(EVENTS[5:], EVENTS[-1].time)
    assert list(read_events(state)) == EVENTS
    out = tmp_path / "trace"
    assert main(["trace", "export", "--state", str(state), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "left out: 1 jobs still queued or running at the journal's end" in said
    inventory = read_inventory(out / "machines.yaml")
    assert [m.name for m in inventory.machines] == ["pc1", "pc2"]
    sessions = read_owner_sessions(out / "owners.csv", inventory)
    assert sessions.login.tolist() == [T + 50, T + 200]
    assert sessions.logout.tolist() == [T + 90, T + 200]  # still open: ends with the journal
    jobs = read_jobs(out / "jobs.csv")
    assert jobs.job_id == ["1.0"]  # 2.0 still runs: no one removed it, its run time is unknown
    assert jobs.runtime[0] == 100.0 and math.isinf(jobs.remove[0])
    replay = ["replay", "--machines", str(out / "machines.yaml"), "--owners"]
    replay += [str(out / "owners.csv"), "--jobs", str(out / "jobs.csv"), "--out", str(tmp_path)]
    with caplog.at_level(logging.INFO, logger="htcondor_advisor.replay"):
        assert main([*replay, "--no-progress"]) == 0
    assert "the machines reboot at 03:00 UTC each night" in caplog.text  # an assumption, said
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="htcondor_advisor.replay"):
        assert main([*replay, "--reboot-hour", "none", "--no-progress"]) == 0
    assert "reboot" not in caplog.text


def test_export_without_a_journal_is_a_user_error(tmp_path: Path, capsys) -> None:
    assert main(["trace", "export", "--state", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "machines.json" in capsys.readouterr().err
