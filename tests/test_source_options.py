"""The replay's sources as a user names them: options the sources would ignore are refused, a
trace file's period starts at its first dated event, and what is left out is said."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli import main

MONDAY = 1262563200.0  # 2010-01-04 00:00 UTC
INVENTORY = """\
types:
  normal: {cores: 2, active: 57, idle: 40, sleep: 2}
clusters:
  lab: {hours: '00:00-24:00'}
machines:
- {name: lab-001, cluster: lab, type: normal}
"""


def _files(tmp_path: Path, sessions: list[tuple[float, float]], submits: list[float]) -> list[str]:
    (tmp_path / "machines.yaml").write_text(INVENTORY)
    owners = "".join(f"{a},lab-001,{b}\n" for a, b in sessions)
    (tmp_path / "owners.csv").write_text("login,machine,logout\n" + owners)
    jobs = "".join(f"{t},{i + 1}.0,alice,600,,0\n" for i, t in enumerate(submits))
    (tmp_path / "jobs.csv").write_text("submit,job_id,user,runtime,remove,replicable\n" + jobs)
    names = ("machines", "owners", "jobs")
    return [word for n in names for word in (f"--{n}", str(tmp_path / f"{n}.{_ext(n)}"))]


def _ext(name: str) -> str:
    return "yaml" if name == "machines" else "csv"


def _replay(argv: list[str], out: Path) -> dict:
    assert main(["replay", *argv, "--no-progress", "--out", str(out)]) == 0
    return json.loads((out / "summary.json").read_text())


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--owners", "owners.csv"], "--owners is read only with --machines"),
        (["--fta-nodes", "3"], "--fta-nodes is read only with --fta"),
        (["--jobs", "jobs.csv", "--swf", "jobs.csv"], "--jobs and --swf both name the jobs"),
        (["--shapes-file", "machines.yaml"], "--shapes-file is read only with --shape"),
    ],
)
def test_an_option_the_sources_would_ignore_is_refused(
    extra: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # each once replayed without a word, as if the option had been read
    _files(tmp_path, [], [MONDAY])
    argv = ["--scenario", "campus", "--days", "1", "--scale", "0.05"]
    extra = [str(tmp_path / w) if w.endswith((".csv", ".yaml")) else w for w in extra]
    assert main(["replay", *argv, *extra, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0]


def test_scale_is_refused_with_a_trace_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = [*_files(tmp_path, [(MONDAY, MONDAY + 60)], [MONDAY]), "--scale", "0.5"]
    assert main(["replay", *argv, "--out", str(tmp_path / "out")]) == 2
    assert "--scale is read only with --scenario" in capsys.readouterr().err


def test_a_trace_without_owner_sessions_starts_at_its_first_job(tmp_path: Path) -> None:
    # it once started on 1 January 1970 and replayed 40 years of nothing
    summary = _replay(_files(tmp_path, [], [MONDAY + 3600]), tmp_path / "out")
    assert [m["month"] for m in summary["months"]] == ["2010-01"]
    assert summary["jobs"]["completed"] == 1


def test_a_job_submitted_before_the_first_login_does_not_wait_for_it(tmp_path: Path) -> None:
    # the period began at the first login, three days after the job, which waited until then
    argv = _files(tmp_path, [(MONDAY + 3 * 86400, MONDAY + 3 * 86400 + 600)], [MONDAY])
    summary = _replay(argv, tmp_path / "out")
    assert summary["jobs"]["completed"] == 1
    assert summary["overhead_min_mean"] < 5


def test_jobs_after_the_period_are_counted_when_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    argv = _files(tmp_path, [], [MONDAY, MONDAY + 600, MONDAY + 5 * 86400])
    with caplog.at_level("INFO"):
        summary = _replay([*argv, "--days", "2"], tmp_path / "out")
    assert summary["jobs"]["submitted"] == 2
    assert "1 of 3 jobs are submitted after the period's end" in caplog.text


def test_an_fta_file_of_no_node_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    header = "event_id component_id node_id platform_id node_name event_type event_start_time"
    fta = tmp_path / "event_trace.tab"
    fta.write_text("\t".join([*header.split(), "event_stop_time", "event_end_reason"]) + "\n")
    argv = [*_files(tmp_path, [], [MONDAY])[4:], "--fta", str(fta)]
    assert main(["replay", *argv, "--out", str(tmp_path / "out")]) == 2
    assert "no node in it" in capsys.readouterr().err


def test_bench_replay_measures_the_replay_a_user_runs(capsys: pytest.CaptureFixture) -> None:
    # bench read the replay's --wait-bound, which it never defined: AttributeError every time
    argv = ["bench", "replay", "--scenario", "campus", "--days", "1", "--scale", "0.05"]
    assert main([*argv, "--policy", "frugal", "--wait-bound", "24"]) == 0
    assert "policy            frugal/" in capsys.readouterr().out


def test_an_output_directory_that_cannot_be_made_is_refused_before_any_work(
    capsys: pytest.CaptureFixture,
) -> None:
    # it was found only when the outputs were written, after the whole replay
    with pytest.raises(SystemExit) as stop:
        main(["replay", "--scenario", "campus", "--days", "1", "--out", "/proc/self/run"])
    assert stop.value.code == 2
    assert "--out: cannot write in /proc/self/run" in capsys.readouterr().err


def test_a_failed_command_leaves_no_output_directory(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    assert main(["replay", "--scenario", "campus", "--policy", "nosuch", "--out", str(out)]) == 2
    assert not (tmp_path / "a").exists()


def test_a_reader_that_leaves_early_is_no_error() -> None:
    # `htcondor-advisor policies | head -0` ended in a BrokenPipeError traceback
    command = [sys.executable, "-m", "advisor.cli", "policies"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()  # before the command has started to write
        err = child.stderr.read().decode()
    assert child.returncode == 0 and "Traceback" not in err


def test_an_unknown_log_level_is_refused_in_one_line(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--log-level", "loud", "policies"])
    assert stop.value.code == 2
    assert "--log-level: invalid choice: 'LOUD'" in capsys.readouterr().err


def test_jobs_no_machine_can_take_are_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # a job asking for 8 cores of two-core partitionable machines waited the year in silence,
    # and every later job of its class behind it
    argv = _files(tmp_path, [], [MONDAY, MONDAY + 60])
    jobs = tmp_path / "jobs.csv"
    lines = jobs.read_text().splitlines()
    rows = [f"{lines[0]},cpus", f"{lines[1]},8", f"{lines[2]},1"]
    jobs.write_text("\n".join(rows) + "\n")
    with caplog.at_level("INFO"):
        summary = _replay([*argv, "--slots", "partitionable", "--days", "1"], tmp_path / "out")
    assert summary["jobs"]["submitted"] == 1 and summary["jobs"]["completed"] == 1
    assert "1 of 2 jobs request more cores or memory than any machine has" in caplog.text


def test_an_swf_log_without_a_job_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # it replayed as a pool with no job, where an empty jobs CSV is refused
    swf = tmp_path / "empty.swf"
    swf.write_text("; Version: 2.2\n")
    argv = ["replay", "--scenario", "campus", "--days", "1", "--swf", str(swf)]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "no job line in it" in capsys.readouterr().err
