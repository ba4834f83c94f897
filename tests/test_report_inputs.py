"""``report``'s inputs through the real CLI: a bad replay output or ``--png`` target is one line
(exit 2) naming the file and the fix, the footer says how the intervals were drawn, and the
``wrote`` line names the file written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from advisor.cli import main
from advisor.daemon.effect import RESAMPLES

HEADER = "job_id,submit,finish,attempts,overhead_s,good_wh,wasted_wh,arm,machine"


def replay_out(tmp_path: Path, rows: list[str] | None = None, summary: str | None = None) -> Path:
    """A replay's output with a control group: two days, four treated and two control machines,
    every job completed unless ``rows`` says otherwise."""
    out = tmp_path / "out"
    out.mkdir()
    if rows is None:
        rows = []
        for j in range(24):
            arm, machine = ("control", f"c{j % 2}") if j % 4 == 0 else ("treated", f"t{j % 4}")
            submit = (j % 2) * 86400 + j * 60
            rows.append(
                f"{j}.0,{submit},{submit + 900},1,{60 + j},{10 + j % 3}.000,0.000,{arm},{machine}"
            )
    (out / "jobs.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    control = {"control": {"jobs": 6}, "treated": {"jobs": 18}}
    (out / "summary.json").write_text(
        json.dumps({"control": control}) if summary is None else summary
    )
    return out


def one_line_error(capsys: Any, argv: list[str]) -> str:
    """Runs the CLI, expecting the one-line user error (exit 2) and nothing on stdout."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in captured.err, captured.err
    assert captured.out == ""
    return err[0]


GOOD_ROW = "9.0,60,960,1,60,10.000,0.000,treated,t1"


@pytest.mark.parametrize(
    ("summary", "rows", "where", "what"),
    [
        ("{not json", None, "summary.json:1:2:", "not JSON"),
        ("[1, 2]", None, "summary.json:", "expected a JSON object, got a list"),
        (None, [GOOD_ROW.replace("10.000", "abc")], "jobs.csv:2:", "column 'good_wh'"),
        (None, [GOOD_ROW, GOOD_ROW.replace("60,10", "1e999,10")], "jobs.csv:3:", "'overhead_s'"),
        (None, [GOOD_ROW.rsplit(",", 3)[0]], "jobs.csv:2:", "fewer fields"),
        (None, [GOOD_ROW.replace("treated", "both")], "jobs.csv:2:", "column 'arm'"),
    ],
)
def test_a_bad_replay_file_is_one_line_naming_it(
    tmp_path: Path, capsys: Any, summary: str | None, rows: list[str] | None, where: str, what: str
) -> None:
    out = replay_out(tmp_path, rows, summary)
    line = one_line_error(capsys, ["report", "--replay", str(out)])
    assert f"{out}/{where}" in line and what in line and "replay --control-percent" in line, line


def test_a_jobs_csv_without_a_column_names_it(tmp_path: Path, capsys: Any) -> None:
    out = replay_out(tmp_path)
    jobs = out / "jobs.csv"
    jobs.write_text(jobs.read_text().replace(",good_wh,", ",energy,"))
    line = one_line_error(capsys, ["report", "--replay", str(out)])
    assert f"{jobs}:1: no column 'good_wh'" in line and "replay --control-percent" in line, line


def test_a_jobs_csv_not_utf8_names_its_line(tmp_path: Path, capsys: Any) -> None:
    out = replay_out(tmp_path)
    jobs = out / "jobs.csv"
    lines = jobs.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b"treated", b"trait\xe9")
    jobs.write_bytes(b"".join(lines))
    line = one_line_error(capsys, ["report", "--replay", str(out)])
    assert f"{jobs}:4: not UTF-8" in line, line


def test_a_file_given_as_a_directory_is_said(tmp_path: Path, capsys: Any) -> None:
    a_file = tmp_path / "state"
    a_file.write_text("")
    line = one_line_error(capsys, ["report", "--state-dir", str(a_file)])
    assert f"{a_file}: is a file, not a state directory" in line, line
    line = one_line_error(capsys, ["report", "--replay", str(a_file)])
    assert f"{a_file}: is a file, not a directory" in line, line


def test_the_footer_says_days_and_machines_are_resampled(tmp_path: Path, capsys: Any) -> None:
    assert main(["report", "--replay", str(replay_out(tmp_path))]) == 0
    footer = capsys.readouterr().out.strip().splitlines()[-1]
    assert footer.startswith("intervals: 95% percentile bootstrap")
    assert f"{RESAMPLES} seeded resamples" in footer and "the days" in footer
    assert "the machines" in footer and "pigeonhole" in footer


@pytest.mark.parametrize(
    ("png", "written"),
    [("effect.png", "effect.png"), ("E.PNG", "E.PNG"), ("figs", "figs/effect.png")],
)
def test_png_says_the_file_it_wrote(tmp_path: Path, capsys: Any, png: str, written: str) -> None:
    (tmp_path / "figs").mkdir()
    out = replay_out(tmp_path)
    assert main(["report", "--replay", str(out), "--png", str(tmp_path / png)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"wrote {tmp_path / written}"
    assert (tmp_path / written).is_file()


@pytest.mark.parametrize(
    ("png", "what"),
    [
        ("noext", "not a .png file nor a directory"),
        ("eff.txt", "not a .png file nor a directory"),
        ("missing/deeper/x.png", "no directory"),
    ],
)
def test_a_bad_png_target_is_refused_before_any_work(
    tmp_path: Path, capsys: Any, png: str, what: str
) -> None:
    target = tmp_path / png
    # the state directory does not exist: the --png error comes first, before reading it
    line = one_line_error(
        capsys, ["report", "--state-dir", str(tmp_path / "none"), "--png", str(target)]
    )
    assert f"--png {target}: {what}" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == []
