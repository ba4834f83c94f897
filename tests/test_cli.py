"""The command line as a user meets it: outputs, listings and located errors."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from conftest import require

from advisor.cli import main
from advisor.commands.policies import first_paragraph
from plugins.contract.option_pairs import option_text
from plugins.contract.policy import OptionError
from plugins.contract.registry import MODELS, available, policy_for

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


def test_replay_without_out_prints_the_table_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["replay", "--scenario", "campus", "--days", "3", "--scale", "0.05"]) == 0
    out, err = capsys.readouterr()
    assert "HTC energy" in out and "--out DIR" in err
    assert list(tmp_path.iterdir()) == []


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


def test_a_partitionable_inventory_replays_with_jobs_sharing_machines(tmp_path: Path) -> None:
    _write_scenario(tmp_path / "trace", days=2)
    machines = tmp_path / "trace" / "machines.yaml"
    inventory = yaml.safe_load(machines.read_text())
    for cluster in inventory["clusters"].values():
        cluster["slots"] = "partitionable"
    machines.write_text(yaml.safe_dump(inventory))
    assert main(_replay_files(tmp_path / "trace", tmp_path / "replay")) == 0
    cores = json.loads((tmp_path / "replay" / "summary.json").read_text())["cores"]
    assert cores["slots"] == "partitionable" and 0 < cores["busy_share"] < 1


def test_slots_switch_replays_the_campus_partitionable(tmp_path: Path) -> None:
    base = ["replay", "--scenario", "campus", "--days", "2", "--scale", "0.05"]
    for slots in ("single", "partitionable"):
        out = tmp_path / slots
        assert main([*base, "--slots", slots, "--policy", "random", "--out", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["cores"]["slots"] == slots
    single, shared = (
        json.loads((tmp_path / s / "summary.json").read_text())["cores"]["busy_mean"]
        for s in ("single", "partitionable")
    )
    assert shared < single  # a one-core job no longer holds a whole multi-core desktop


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
    # a raw int() message, and a negative count taken as it came
    bandit = [*base, "--policy", "bandit-cluster", "--set", "initial_epsilon=0.5"]
    assert main(bandit) == 2
    assert "initial_epsilon='0.5': expected off or EPS:N" in capsys.readouterr().err
    assert main([*base, "--policy", "frugal", "--set", "min_fates=-5"]) == 2
    assert "min_fates='-5': must be 0 or more" in capsys.readouterr().err


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
def test_fta_availability_drives_a_replay(
    shared_data: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
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
    with caplog.at_level(logging.INFO):
        assert main(args) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["jobs"]["completed"] > 1000
    assert summary["pool_energy_mwh"]["down"] == 0  # down machines draw nothing
    assert summary["evictions"]["reboot"] > 0  # nightly reboots and node failures evict
    # the first 300 nodes by id, most listed only from their first failure, years on
    assert "292 of 300 nodes have no interval in the replayed period" in caplog.text


def _error_line(capsys: pytest.CaptureFixture) -> str:
    """What a user error prints: one line (more would be a traceback or a usage dump)."""
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_scenario_names_the_campus_yaml_as_replay_does(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    missing = tmp_path / "campus.yaml"
    named = f"--scenario-config: no such file: {missing}; check the path"
    for option in ("--scenario-config", "--config"):  # --config: the older name, kept
        assert main(["scenario", "campus", option, str(missing), "--out", str(tmp_path)]) == 2
        assert _error_line(capsys).endswith(named)
    replay = ["replay", "--scenario", "campus", "--scenario-config", str(missing)]
    assert main([*replay, "--out", str(tmp_path)]) == 2
    assert _error_line(capsys).endswith(named)
    with pytest.raises(SystemExit):
        main(["scenario", "--help"])
    assert "--config is its older name" in " ".join(capsys.readouterr().out.split())


def test_policies_shows_whole_descriptions_models_and_typable_defaults(
    capsys: pytest.CaptureFixture,
) -> None:
    assert main(["policies"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # as if no line were wrapped
    for name, cls in available().items():
        assert f"{name} (version {cls.VERSION}; models: {', '.join(sorted(cls.SERVES))})" in out
        assert first_paragraph(cls.__doc__) in out
    assert "--set history=all " in out and "--set qos=within-hour " in out
    assert "--set initial_epsilon=off " in out and "--set shares='' " in out
    assert "HistorySpec(" not in out and "QosBound(" not in out and "None" not in out


def test_every_policy_says_what_it_does_and_serves_known_models() -> None:
    for name, cls in available().items():
        assert first_paragraph(cls.__doc__), f"{name}: no docstring"
        assert cls.SERVES, name
        assert not cls.SERVES - MODELS.keys(), f"{name}: serves unknown models"


def test_every_default_is_shown_as_its_option_reads_it() -> None:
    for cls in available().values():
        for key, opt in cls.OPTIONS.items():
            assert opt.parse(option_text(opt.default)) == opt.default, (cls.NAME, key)


@pytest.mark.parametrize(
    ("policy", "serves"),
    [("fifo", "the grid-queue model"), ("or-oracle", "the dedicated model")],
)
def test_replay_refuses_a_policy_of_another_model(
    tmp_path: Path, capsys: pytest.CaptureFixture, policy: str, serves: str
) -> None:
    args = ["replay", "--scenario", "campus", "--days", "1", "--policy", policy]
    assert main([*args, "--out", str(tmp_path)]) == 2
    err = _error_line(capsys)
    assert f"policy {policy!r} serves {serves}, not campus; choose one of: " in err
    choices = err.split("choose one of: ")[1].split(", ")
    assert "random" in choices and "timeout" in choices and policy not in choices


def test_the_twin_refuses_a_policy_of_another_model(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    args = ["run", "--pool", "sim:campus", "--days", "1", "--scale", "0.02", "--policy", "sjf"]
    assert main([*args, "--out", str(tmp_path)]) == 2
    assert "policy 'sjf' serves the grid-queue model, not campus" in _error_line(capsys)
    assert not (tmp_path / "state").exists()  # refused before the daemon set anything up


def test_policy_for_takes_a_policy_in_each_model_it_serves() -> None:
    assert policy_for("timeout", "campus") is policy_for("timeout", "dedicated")
    assert policy_for("utility-sarsa", "grid-queue").NAME == "utility-sarsa"
    with pytest.raises(OptionError, match="serves the campus and dedicated models, not grid-queue"):
        policy_for("or-ppo", "grid-queue")


@pytest.mark.parametrize("option", ["--machines", "--owners", "--jobs", "--swf", "--fta"])
def test_a_missing_trace_file_is_named_with_its_option(
    tmp_path: Path, capsys: pytest.CaptureFixture, option: str
) -> None:
    present, missing = tmp_path / "present", tmp_path / "missing"
    present.write_text("")
    files = {o: present for o in ("--machines", "--owners", "--jobs")} | {option: missing}
    args = ["replay", *(str(w) for pair in files.items() for w in pair)]
    assert main([*args, "--out", str(tmp_path / "out")]) == 2
    line = _error_line(capsys)
    assert (
        line == f"htcondor-advisor replay: error: {option}: no such file: {missing}; check the path"
    )


def test_a_directory_or_relative_path_is_named_with_its_option(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["replay", "--machines", "m.yaml", "--owners", "o.csv", "--jobs", "j.csv"]
    assert main([*args, "--out", "out"]) == 2
    assert _error_line(capsys).endswith(
        f"--machines: no such file: m.yaml; check the path (relative to {tmp_path})"
    )
    assert (
        main(["train-idle", "--machines", str(tmp_path), "--until", "2010-07", "--out", "x"]) == 2
    )
    assert _error_line(capsys).endswith(
        f"--machines: is a directory: {tmp_path}; name a file inside it"
    )


def test_utility_lcg_refuses_a_job_count_that_leaves_nothing_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # the last 500 jobs drain the queue and are not counted: 500 jobs once raised IndexError
    with pytest.raises(SystemExit) as stop:
        main(["experiment", "utility-lcg", "--jobs", "500", "--out", str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--jobs: 500 leaves no job counted" in err and "Traceback" not in err


def test_utility_lcg_finds_its_log_under_the_data_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ADVISOR_DATA_DIR", str(tmp_path / "data"))
    assert main(["experiment", "utility-lcg", "--out", str(tmp_path / "out")]) == 2
    expected = f"{tmp_path}/data/b_workloads/LCG-2005-1/LCG-2005-1.swf.gz: no such SWF log"
    assert expected in _error_line(capsys)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["replay", "--scenario", "campus", "--scale", "0"], "--scale: must be a number above 0"),
        (["replay", "--scenario", "campus", "--days", "0"], "--days: must be a whole number"),
        (["replay", "--scenario", "campus", "--seed", "-3"], "--seed: must be a whole number"),
        (["experiment", "shapes", "--scales", "1,abc"], "--scales: must be a number above 0"),
        (["experiment", "shapes", "--seeds", "1,x"], "--seeds: must be a whole number"),
        (["experiment", "shapes", "--days", "0"], "--days: must be a whole number from 1"),
        (["scenario", "campus", "--scale", "-1"], "--scale: must be a number above 0"),
        (["experiment", "epsilon-sigma", "--epsilons", "0.1,abc"], "--epsilons: must be a number"),
        (["experiment", "history", "--sizes", "10,0"], "--sizes: must be a whole number from 1"),
        (["experiment", "shapes", "--wait-bound", "-1"], "--wait-bound: must be a number of hours"),
        (
            ["experiment", "shapes", "--wait-bound", "nan"],
            "--wait-bound: must be a number of hours",
        ),
        (["bench-daemon", "cycle", "--slots", "0"], "--slots: must be a whole number from 1"),
        (["bench-daemon", "cycle", "--events", "-1"], "--events: must be a whole number from 0"),
    ],
)
def test_a_bad_number_is_refused_with_its_option_before_any_work(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # --scale 0 once raised ValueError from inside the scenario, and --days 0 replayed a year
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--out", str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("command", [["replay", "--scenario", "campus"], ["scenario", "campus"]])
def test_an_output_directory_that_is_a_file_is_refused_before_any_work(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # a replay once ran its year, then raised FileExistsError writing its outputs
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    with pytest.raises(SystemExit) as stop:
        main([*command, "--days", "1", "--out", str(taken / "run")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"--out: {taken} is a file, not a directory" in err and "Traceback" not in err
    assert taken.read_text() == "mine"


@pytest.mark.parametrize(
    ("option", "text", "said"),
    [
        ("--shapes-file", b"small: {machines: [1, 2]\n", ":2:1: not valid YAML"),
        (
            "--shapes-file",
            b"small: {}\nsmall: {}\n",
            ":2:1: duplicate key 'small' (first at line 1)",
        ),
        ("--shapes-file", b"\xff\xfe", ":1:1: not UTF-8 text (byte 0xff); save the file as UTF-8"),
        (
            "--shapes-file",
            b"small: {rooms: {nosuch: 1}}\n",
            ": small.rooms: unknown opening-hour profile 'nosuch'; the campus has always, ",
        ),
        ("--scenario-config", b"owners: [\n", ":2:1: not valid YAML"),
        ("--scenario-config", b"\xffx", ":1:1: not UTF-8 text (byte 0xff)"),
    ],
)
def test_a_broken_scenario_or_shapes_file_is_one_line_naming_the_place(
    option: str, text: bytes, said: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # both are written by hand, as the daemon's configuration is, and read by the same parser
    path = tmp_path / "mine.yaml"
    path.write_bytes(text)
    argv = ["replay", "--scenario", "campus", option, str(path), "--days", "1", "--scale", "0.05"]
    shape = ["--shape", "small"] if option == "--shapes-file" else []
    assert main([*argv, *shape, "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"error: {path}{said}" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["explain", "--url", "cm:9681", "m"], "--url: expected http://HOST:PORT, got 'cm:9681'"),
        (
            [
                "train-idle",
                "--scenario",
                "campus",
                "--days",
                "3",
                "--scale",
                "0.05",
                "--until",
                "2010-07",
                "--out",
                "x",
            ],
            "--until 2010-07: the trace ends before it (in 2010-01)",
        ),
        (
            ["experiment", "idle-accuracy", "--scale", "0.02", "--days", "10", "--out", "x"],
            "--days 10: no month boundary inside the window",
        ),
    ],
)
def test_an_address_or_month_out_of_reach_is_one_line(
    argv: list[str],
    said: str,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)  # (--out x)
    # all were tracebacks: urllib's "unknown url type", numpy's IndexError on a machine that
    # had no owner in a window past the trace's end, matplotlib's on a figure with no month
    code: int | str | None
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err  # (argparse's usage line first, for --url)
    assert code == 2 and said in err.strip().splitlines()[-1] and "Traceback" not in err, err


def test_a_replay_takes_0_for_off_as_the_configuration_does(tmp_path: Path) -> None:
    # control.percent: 0 and ADVISOR_WAIT_BOUND = 0 mean off, and experiment shapes took
    # --wait-bound 0; replay refused both
    base = ["replay", "--scenario", "campus", "--days", "2", "--scale", "0.05"]
    base += ["--policy", "bandit-cluster"]
    assert main([*base, "--out", str(tmp_path / "plain")]) == 0
    off = ["--wait-bound", "0", "--control-percent", "0"]
    assert main([*base, *off, "--out", str(tmp_path / "off")]) == 0
    assert main([*base, "--wait-bound", "none", "--out", str(tmp_path / "none")]) == 0
    jobs = [(tmp_path / run / "jobs.csv").read_text() for run in ("plain", "off", "none")]
    assert jobs[0] == jobs[1] == jobs[2]
    assert main([*base, "--control-percent", "10", "--out", str(tmp_path / "split")]) == 0
    assert (tmp_path / "split/jobs.csv").read_text() != jobs[0]  # (the comparison can fail)


def test_ctrl_c_while_a_replay_writes_is_one_line_and_leaves_no_summary_of_another_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a traceback, and the earlier run's summary.json beside a jobs.csv cut short:
    ``report --replay`` read them as one run, with exit 0."""
    import simulator.campus.summary as summary

    argv = ["replay", "--scenario", "campus", "--days", "7", "--scale", "0.02", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path)]) == 0

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(summary, "_write_jobs", interrupted)
    capsys.readouterr()
    assert main([*argv, "--seed", "2", "--out", str(tmp_path)]) == 130
    (said,) = capsys.readouterr().err.strip().splitlines()
    assert said.startswith("htcondor-advisor replay: interrupted; what ") and "run it again" in said
    assert not (tmp_path / "summary.json").exists()


def test_a_scenario_written_again_is_moved_in_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped on the way, it left the new machines.yaml beside the earlier owners.csv and
    jobs.csv, which replayed without a word as a pool that never was."""
    import simulator.traces as traces

    argv = ["scenario", "campus", "--days", "7", "--scale", "0.02", "--out", str(tmp_path)]
    assert main(argv) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix != ".png"}

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(traces, "write_jobs", interrupted)
    assert main([*argv, "--seed", "2"]) == 130
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix != ".png"}
    assert after == before  # the earlier run's files, all of them, and nothing aside
