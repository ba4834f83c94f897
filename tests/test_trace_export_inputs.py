"""``trace export`` on a damaged or missing journal: one line naming the file (and the line of
``events.jsonl``) and what is wrong, exit 2, never a traceback; only a last line torn by a crash
is skipped."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.condor.journal import Journal
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, JobQueued
from plugins.contract.policy import MachineInfo
from simulator.traces import read_jobs

T = 1_700_000_000.0


def _journal(tmp_path: Path) -> Path:
    """A state directory whose journal holds one machine and one completed job (3 lines)."""
    state = tmp_path / "state"
    journal = Journal(state)
    journal.save_machines({"pc1": MachineInfo("pc1", "lab", "Normal", 57.0, 40.0, 2.0)})
    journal.append(
        [
            JobQueued(T, "1.0", "alice"),
            AttemptStarted(T + 10, "1.0", "pc1"),
            AttemptEnded(T + 70, "1.0", "pc1", AttemptOutcome.COMPLETED, T + 10),
        ],
        now=T + 70,
    )
    return state


def _export(state: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The exit code and stderr's one line."""
    code = main(["trace", "export", "--state", str(state), "--out", str(out)])
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("htcondor-advisor trace export: error: ")
    return code, line


def _replace_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    lines[number - 1] = text
    path.write_text("".join(lines))


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (
            lambda j: (j / "machines.json").write_text("garbage"),
            r"machines\.json:1: expected a JSON object of machines",
        ),
        (
            lambda j: (j / "machines.json").write_text('{"pc1": {"name": "pc1"}}'),
            r"machines\.json: field 'pc1\.cluster': expected a value in every machine",
        ),
        (
            lambda j: _replace_line(j / "events.jsonl", 2, '{"kind": "Bogus", "time": 1}\n'),
            r"events\.jsonl:2: field 'kind': expected one of AttemptEnded, .*got 'Bogus'",
        ),
        (
            lambda j: _replace_line(
                j / "events.jsonl", 2, '{"kind": "JobRemoved", "time": "soon", "job_id": "1.0"}\n'
            ),
            r"events\.jsonl:2: field 'time': expected a number of at least 0, got 'soon'",
        ),
        (
            lambda j: _replace_line(j / "events.jsonl", 2, '{"kind": "Job\n'),
            r"events\.jsonl:2: expected a JSON event \(a crash cuts short only the last line",
        ),
        (
            lambda j: (j / "events.jsonl").unlink(),
            r"events\.jsonl: expected the events the advisor journals .*got 'no such file'",
        ),
    ],
    ids=["machines garbage", "machine fields", "kind", "field type", "torn mid-file", "no events"],
)
def test_a_damaged_journal_is_one_line_naming_its_file_and_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], object],
    expected: str,
) -> None:
    state = _journal(tmp_path)
    damage(state / "condor-journal")
    code, line = _export(state, tmp_path / "out", capsys)
    assert code == 2
    assert f"error: {state / 'condor-journal'}/" in line
    assert re.search(expected, line), line


def test_a_last_line_torn_by_a_crash_is_skipped_and_cut_before_the_next_append(
    tmp_path: Path,
) -> None:
    state = _journal(tmp_path)
    events = state / "condor-journal" / "events.jsonl"
    with events.open("a") as journal:
        journal.write('{"kind": "JobQueued", "time": 17')  # the daemon crashed mid-write
    out = tmp_path / "out"
    assert main(["trace", "export", "--state", str(state), "--out", str(out)]) == 0
    assert read_jobs(out / "jobs.csv").job_id == ["1.0"]
    done = AttemptEnded(T + 160, "2.0", "pc1", AttemptOutcome.COMPLETED, T + 110, 57.0)
    Journal(state).append([JobQueued(T + 100, "2.0", "bob"), done], T + 160)  # it goes on
    assert main(["trace", "export", "--state", str(state), "--out", str(out)]) == 0
    assert read_jobs(out / "jobs.csv").job_id == ["1.0", "2.0"]


def test_a_state_directory_without_a_journal_names_the_real_configuration_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, line = _export(tmp_path, tmp_path / "out", capsys)
    assert code == 2
    assert "state.directory" in line and "pool.journal" in line
    assert "pool.state_dir" not in line


def test_a_state_without_a_journal_is_told_apart_from_a_journal_still_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one message served all three, and its advice was wrong for a daemon that had just started
    missing, a_file, started = tmp_path / "missing", tmp_path / "file", tmp_path / "started"
    a_file.write_text("")
    Journal(started)  # a live daemon's journal before the collector first answered
    said = {
        missing: "no such directory",
        a_file: "is a file",
        started: "has no machines.json yet: the advisor has not seen the collector answer",
    }
    for state, expected in said.items():
        code, line = _export(state, tmp_path / "out", capsys)
        assert code == 2 and expected in line, line
