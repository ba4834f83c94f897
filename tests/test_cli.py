"""The command line as a user meets it: outputs, listings and located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require

from advisor.cli import main

REQUIRED = ["policy", "overhead_min_mean", "months"]


def test_replay_writes_summary_and_jobs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = [
        "replay",
        "--scenario",
        "campus",
        "--days",
        "10",
        "--scale",
        "0.05",
        "--out",
        str(tmp_path),
    ]
    assert main(args) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    for key in REQUIRED:
        assert key in summary
    for group, keys in {
        "jobs": ["submitted", "completed", "never_finished"],
        "evictions": ["owner", "reboot"],
        "energy_mwh": ["good", "wasted", "total"],
        "sim": ["events", "wall_s"],
    }.items():
        assert all(k in summary[group] for k in keys), group
    rows = (tmp_path / "jobs.csv").read_text().splitlines()
    assert rows[0] == "job_id,submit,finish,attempts,overhead_s,good_wh,wasted_wh"
    assert len(rows) - 1 == summary["jobs"]["submitted"]
    assert "HTC energy" in capsys.readouterr().out


def test_policies_lists_both_baselines(capsys: pytest.CaptureFixture) -> None:
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert "random" in out and "crystal" in out and "oracle" in out


def _write_scenario(out: Path, days: int) -> None:
    assert (
        main(["scenario", "campus", "--days", str(days), "--scale", "0.03", "--out", str(out)]) == 0
    )


def _replay_files(trace: Path, out: Path) -> list[str]:
    """A replay of the trace files that ``scenario`` wrote into ``trace``."""
    files = ["--machines", "machines.yaml", "--owners", "owners.csv", "--jobs", "jobs.csv"]
    paths = [str(trace / f) if i % 2 else f for i, f in enumerate(files)]
    return ["replay", *paths, "--out", str(out), "--no-progress"]


def test_scenario_writes_traces_that_replay(tmp_path: Path) -> None:
    _write_scenario(tmp_path / "trace", days=7)
    assert (tmp_path / "trace" / "owner_sessions_per_day.png").stat().st_size > 1000
    assert main(_replay_files(tmp_path / "trace", tmp_path / "replay")) == 0
    summary = json.loads((tmp_path / "replay" / "summary.json").read_text())
    assert summary["jobs"]["submitted"] > 0


def test_malformed_jobs_file_gives_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _write_scenario(tmp_path / "trace", days=2)
    jobs = tmp_path / "trace" / "jobs.csv"
    lines = jobs.read_text().splitlines()
    lines[3] = lines[3].replace(lines[3].split(",")[0], "yesterday", 1)
    jobs.write_text("\n".join(lines) + "\n")
    assert main(_replay_files(tmp_path / "trace", tmp_path / "r")) == 2
    err = capsys.readouterr().err
    assert "jobs.csv:4" in err and "submit" in err


def test_unknown_policy_and_bad_option_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    base = [
        "replay",
        "--scenario",
        "campus",
        "--days",
        "1",
        "--scale",
        "0.02",
        "--out",
        str(tmp_path),
    ]
    assert main([*base, "--policy", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert main([*base, "--set", "epsilon=0.1"]) == 2
    assert "unknown option 'epsilon'" in capsys.readouterr().err


@pytest.mark.realdata
def test_swf_log_drives_a_replay(shared_data: Path, tmp_path: Path) -> None:
    swf = shared_data / "b_workloads/HPC2N-subset_alea/hpc2n-subset.swf.gz"
    require(swf.exists(), f"{swf} missing")
    args = [
        "replay",
        "--scenario",
        "campus",
        "--days",
        "20",
        "--scale",
        "0.05",
        "--swf",
        str(swf),
        "--out",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(args) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["jobs"]["completed"] > 100


@pytest.mark.realdata
def test_fta_availability_drives_a_replay(shared_data: Path, tmp_path: Path) -> None:
    fta = shared_data / "a_availability/FTA-lanl05_event_trace/event_trace.tab.gz"
    swf = shared_data / "b_workloads/NASA-iPSC-1993-3.1-cln/NASA-iPSC-1993-3.1-cln.swf.gz"
    require(fta.exists() and swf.exists(), "FTA or NASA trace missing")
    args = [
        "replay",
        "--fta",
        str(fta),
        "--fta-nodes",
        "300",
        "--swf",
        str(swf),
        "--days",
        "60",
        "--out",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(args) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["jobs"]["completed"] > 1000
    assert summary["pool_energy_mwh"]["down"] == 0  # down machines draw nothing
    assert summary["evictions"]["reboot"] > 0  # nightly reboots and node failures evict
