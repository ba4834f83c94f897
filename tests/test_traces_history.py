"""condor_history output as the replay's jobs: every saved form reads alike, the completing
attempt is what a job needs, a removal is a job that never finishes, and a history from
another year is replayed in the machine trace's first week at its own hours of the week."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest

from advisor.cli import main
from advisor.lab.history_ads import read_history_ads
from advisor.lab.history_trace import READ, history_jobs
from simulator.sources import SourceSpec, assemble
from simulator.traces import TraceError, read_jobs, write_jobs

# As the schedd's history file and condor_history -long hold them: an ad, then a banner.
LONG = """\
ClusterId = 7
ProcId = 0
GlobalJobId = "ap1.example.org#7.0#1700000000"
Owner = "alice"
JobUniverse = 5
QDate = 1700000000
JobStatus = 4
CommittedTime = 3600
RemoteWallClockTime = 5400.0
NumJobStarts = 2
CompletionDate = 1700009000
RequestCpus = 2
MemoryUsage = 300
RequestMemory = ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / 1024)
*** ProcId = 0 ClusterId = 7 Owner = "alice" CompletionDate = 1700009000
ClusterId = 7
ProcId = 1
GlobalJobId = "ap1.example.org#7.1#1700000000"
Owner = "alice"
JobUniverse = 5
QDate = 1700000000
JobStatus = 4
CommittedTime = 0
JobCurrentStartDate = 1700000100
CompletionDate = 1700000700
RequestCpus = 1
RequestMemory = 2048
*** ProcId = 1 ClusterId = 7 Owner = "alice" CompletionDate = 1700000700
ClusterId = 8
ProcId = 0
GlobalJobId = "ap1.example.org#8.0#1700000500"
Owner = "bob"
JobUniverse = 5
QDate = 1700000500
JobStatus = 3
EnteredCurrentStatus = 1700002300
RemoteWallClockTime = 1700.0
*** ProcId = 0 ClusterId = 8 Owner = "bob" CompletionDate = 0
ClusterId = 9
ProcId = 0
GlobalJobId = "ap1.example.org#9.0#1700000600"
Owner = "bob"
JobUniverse = 7
QDate = 1700000600
JobStatus = 4
CompletionDate = 1700003000
*** ProcId = 0 ClusterId = 9 Owner = "bob" CompletionDate = 1700003000
"""

DASH_LONG = re.sub(r"^\*\*\*.*$", "", LONG, flags=re.MULTILINE)
"""``condor_history -long``: a blank line after each ad."""

EXPECTED = [  # id, user, submit, runtime, remove, cpus, memory
    ("7.0@ap1.example.org", "alice", 1700000000, 3600, np.inf, 2, 300),
    ("7.1@ap1.example.org", "alice", 1700000000, 600, np.inf, 1, 2048),
    ("8.0@ap1.example.org", "bob", 1700000500, np.inf, 1700002300, 1, 128),
]


def _json_value(value: str) -> object:
    """A -long value as condor_history -json writes it (an expression as \\/Expr(...)\\/)."""
    if value.startswith('"'):
        return value.strip('"')
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return f"/Expr({value})/"


def _as_json_objects() -> list[str]:
    objects: list[str] = []
    ad: dict[str, object] = {}
    for line in LONG.splitlines():
        if line.startswith("***"):
            text = json.dumps(ad, indent=2).replace('"/Expr(', '"\\/Expr(').replace(')/"', ')\\/"')
            objects.append(text)
            ad = {}
        else:
            name, _, value = line.partition(" = ")
            ad[name] = _json_value(value)
    return objects


def _rows(path: Path) -> list[tuple[object, ...]]:
    found = history_jobs([(path, read_history_ads(path))])
    jobs = found.jobs
    assert found.left_out == {"scheduler universe (DAGMan and the like)": 1}
    columns = (jobs.submit, jobs.runtime, jobs.remove, jobs.cpus, jobs.memory_mb)
    return [
        (j, u, *(c[i].item() for c in columns))
        for i, (j, u) in enumerate(zip(jobs.job_id, jobs.user, strict=True))
    ]


@pytest.mark.parametrize("form", ["long", "json", "json on one line", "jsonl"])
def test_every_saved_form_of_one_history_gives_the_same_jobs(tmp_path: Path, form: str) -> None:
    text = {
        "long": LONG,
        "json": "[\n" + "\n,\n".join(_as_json_objects()) + "\n]\n",
        "json on one line": "[" + ",".join(o.replace("\n", "") for o in _as_json_objects()) + "]",
        "jsonl": "".join(o.replace("\n", "") + "\n" for o in _as_json_objects()),
    }[form]
    path = tmp_path / "history"
    path.write_text(text)
    assert _rows(path) == EXPECTED


@pytest.mark.parametrize(
    ("last", "removed_at"),
    [
        (
            "LastJobStatus = 5\nJobCurrentStartDate = 1700000900\nLastVacateTime = 1700001000",
            1700001000,
        ),
        ("LastJobStatus = 5", 1700000500),
        (
            "LastJobStatus = 1\nJobCurrentStartDate = 1700000900\nLastVacateTime = 1700001000",
            1700002300,
        ),
    ],
    ids=["held after a run", "held before any", "idle after a run"],
)
def test_a_job_removed_while_held_is_replayed_as_removed_at_its_hold(
    tmp_path: Path, last: str, removed_at: float
) -> None:
    """bob's job 8.0 was removed at 1700002300. Held first, it ran no more after its last
    attempt: replayed until its removal, it would burn the time it sat held as waste."""
    path = tmp_path / "history"
    path.write_text(LONG.replace("RemoteWallClockTime = 1700.0", last))
    jobs = history_jobs([(path, read_history_ads(path, READ))]).jobs
    assert jobs.remove[jobs.job_id.index("8.0@ap1.example.org")] == removed_at


def test_only_what_is_needed_is_parsed_unless_an_expression_needs_the_rest(tmp_path: Path) -> None:
    """A site's ``RequestMemory`` may refer to its own attributes: that ad is parsed whole."""
    own = LONG.replace("RequestMemory = 2048", "RequestMemory = SiteMemory * 2\nSiteMemory = 700")
    path = tmp_path / "history.gz"
    path.write_bytes(gzip.compress(own.encode()))
    ads = list(read_history_ads(path, READ))
    assert "Owner" in ads[0] and "CommittedTime" in ads[0] and "NumJobStarts" in ads[0]
    assert "GlobalJobId" in ads[0] and "JobUniverse" in ads[0]
    assert [ad.eval("RequestMemory") for ad in ads[:2]] == [300, 1400]
    assert "SiteMemory" in ads[1] and "SiteMemory" not in ads[2]


def test_jobs_csv_of_a_history_is_read_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "history"
    path.write_text(LONG)
    assert main(["trace", "history", str(path), "--out", str(tmp_path / "out")]) == 0
    jobs = read_jobs(tmp_path / "out" / "jobs.csv")
    assert jobs.job_id == [row[0] for row in EXPECTED]
    assert list(jobs.cpus) == [2, 1, 1]
    assert list(jobs.never_finishes()) == [False, False, True]


def test_the_lapis_af_table_gives_its_completed_jobs_and_says_what_it_lacks(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real ``condor_history -af:h`` export (lapis): no job ids, no JobStatus, no removal
    times. Its completed jobs are kept with their whole wall time, an upper bound, said so."""
    path = shared_data / "c_htcondor/lapis-condor_history-export/htcondor_jobs.csv"
    ads = list(read_history_ads(path))
    assert len(ads) == 17
    found = history_jobs([(path, ads)])
    done = [ad for ad in ads if ad["CompletionDate"] > 0]
    assert len(found.jobs) == found.completed == found.estimated == len(done)
    assert found.left_out == {"removed, without EnteredCurrentStatus": 17 - len(done)}
    by_id = dict(zip(found.jobs.job_id, found.jobs.runtime, strict=True))
    assert [by_id[f"{i}.0"] for i, ad in enumerate(ads, 1) if ad["CompletionDate"] > 0] == [
        ad["RemoteWallClockTime"] for ad in done
    ]
    assert set(found.jobs.memory_mb) == {float(ad["RequestMemory"]) for ad in done}
    assert main(["trace", "history", str(path), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{len(done)} run times are RemoteWallClockTime" in out
    assert f"left out: {17 - len(done)} jobs: removed, without EnteredCurrentStatus" in out


def test_a_history_that_cannot_be_read_is_one_located_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "history.txt"
    table.write_text("Owner JobStatus\nalice 4\nbob\n")
    with pytest.raises(TraceError, match=r"history.txt:3: expected 2 values as the header"):
        list(read_history_ads(table))
    table.write_text("Owner JobStatus CompletionDate\nalice 4 1700000000\n")
    assert main(["trace", "history", str(table), "--out", str(tmp_path / "o")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "field 'QDate'" in line and "missing from job ad 1" in line
    table.write_text("QDate Owner JobStatus CompletionDate\nyesterday alice 4 1700000000\n")
    assert main(["trace", "history", str(table), "--out", str(tmp_path / "o")]) == 2
    assert "field 'QDate': expected a number" in capsys.readouterr().err
    broken = tmp_path / "history.json"
    broken.write_text('[\n{"QDate": 1,\n "Owner": }\n]')
    with pytest.raises(TraceError, match=r"history.json:3: expected a JSON object"):
        list(read_history_ads(broken))


def _history_csv(directory: Path) -> Path:
    """The LONG history as ``trace history`` writes it: ``directory/jobs.csv``."""
    path = directory / "history"
    path.write_text(LONG)
    write_jobs(history_jobs([(path, read_history_ads(path))]).jobs, directory / "jobs.csv")
    return directory / "jobs.csv"


def _campus_week(jobs: Path | None = None) -> SourceSpec:
    return SourceSpec(scenario="campus", days=7, scale=0.05, seed=1, jobs=jobs)


def test_a_history_from_another_year_runs_in_the_first_week_at_its_hours_of_the_week(
    tmp_path: Path,
) -> None:
    trace, notes = assemble(_campus_week(_history_csv(tmp_path)))
    moved = trace.jobs.submit - np.array([row[2] for row in EXPECTED], dtype=float)
    week = 7 * 86400
    assert trace.start <= trace.jobs.submit[0] < trace.start + week
    assert np.all(moved == moved[0]) and moved[0] % week == 0
    assert np.isfinite(trace.jobs.remove).sum() == 1 and trace.jobs.remove[2] - moved[0] == (
        1700002300
    )
    assert any("weeks earlier, into the machine trace's first week" in n for n in notes)

    own, _ = assemble(_campus_week())  # the campus's own jobs, in its own time: not moved
    write_jobs(own.jobs, tmp_path / "own.csv")
    again, notes = assemble(_campus_week(tmp_path / "own.csv"))
    assert np.array_equal(again.jobs.submit, own.jobs.submit) and not notes


def test_a_history_replayed_on_fewer_days_than_a_week_starts_with_the_period(
    tmp_path: Path,
) -> None:
    # a week would push the history past a two-day period's end, leaving no job to replay
    spec = SourceSpec(scenario="campus", days=2, scale=0.05, seed=1, jobs=_history_csv(tmp_path))
    trace, notes = assemble(spec)
    assert trace.jobs.submit[0] == trace.start and len(trace.jobs) == len(EXPECTED)
    assert any("to the start of the machine trace's 2-day period" in n for n in notes), notes


def test_condor_history_given_as_a_jobs_csv_is_told_how_to_convert_it(tmp_path: Path) -> None:
    # an administrator who hands `replay --jobs` the history itself is told the command to run
    forms = {
        "long": LONG,
        "json": "[\n" + "\n,\n".join(_as_json_objects()) + "\n]\n",
        "jsonl": "".join(o.replace("\n", "") + "\n" for o in _as_json_objects()),
        "xml": '<?xml version="1.0"?>\n<classads>\n</classads>\n',
        "af": "ClusterId ProcId Owner QDate\n1 0 alice 1700000000\n",
    }
    for form, text in forms.items():
        path = tmp_path / form
        path.write_text(text)
        with pytest.raises(TraceError, match=r"^[^\n]*:1: .*trace history FILE --out DIR"):
            read_jobs(path)
    wrong = tmp_path / "jobs.csv"  # a jobs CSV with a mistake is not sent to condor_history
    wrong.write_text("submit,job,user,runtime,remove\n")
    with pytest.raises(TraceError, match=r"unknown column, got 'job'$"):
        read_jobs(wrong)


def _history_error(files: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``trace history`` refuses ``files`` (exit 2) in one line: that line."""
    assert main(["trace", "history", *map(str, files), "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    return line


XML = """\
<?xml version="1.0"?>
<!DOCTYPE classads SYSTEM "classads.dtd">
<classads>
<c>
    <a n="ClusterId"><i>1</i></a>
    <a n="ProcId"><i>0</i></a>
    <a n="Owner"><s>alice</s></a>
    <a n="QDate"><i>1700000000</i></a>
    <a n="JobStatus"><i>4</i></a>
    <a n="CommittedTime"><i>100</i></a>
</c>
<c>
    <a n="ClusterId"><i>2</i></a>
    <a n="ProcId"><i>0</i></a>
    <a n="Owner"><s>bob</s></a>
    <a n="QDate"><i>1700000000</i></a>
    <a n="JobStatus"><i>4</i></a>
    <a n="CommittedTime"><i>100</i></a>
</c>
</classads>
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("garbage\n", r"history: expected condor_history job ads \(condor_history -json > FILE"),
        ("[]\n", r"history: expected condor_history job ads .*got 'no job ad'"),
        ("[\n", r"history:1: expected condor_history -json output that ends with '\]'"),
        (XML[: XML.index("<i>100")], r"history:\d+: .*-xml output that ends with '</classads>'"),
        (XML[: XML.rindex("</classads>")], r"history:19: .*-xml output that ends with"),
        (
            "000 (001.000.000) 2024-01-01 10:00:00 Job submitted from host: <10.0.0.1:9618>\n...\n",
            r"history:1: expected condor_history output, and this is a job event log",
        ),
        ("...\n001 (001.000.000) 2024-01-01 10:00:05 Job executing on host\n", r"job event log"),
        (LONG[: LONG.index("*** ProcId = 1")], r"history:27: .*cut short within its last ad"),
        (
            DASH_LONG[: DASH_LONG.index("RequestCpus = 1")],
            r"history:25: .*, got 'CompletionDate = 1700000700'",
        ),
    ],
    ids=[
        *("garbage", "empty array", "cut -json", "cut -xml", "-xml without end", "log", "log..."),
        *("cut history file", "cut -long"),
    ],
)
def test_a_history_without_a_whole_job_ad_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = tmp_path / "history"
    path.write_text(text)
    assert re.search(expected, _history_error([path], tmp_path / "out", capsys))


def test_a_whole_xml_history_is_read(tmp_path: Path) -> None:
    path = tmp_path / "history.xml"
    path.write_text(XML)
    assert main(["trace", "history", str(path), "--out", str(tmp_path / "out")]) == 0
    assert read_jobs(tmp_path / "out" / "jobs.csv").job_id == ["1.0", "2.0"]


def test_a_directory_is_not_a_history_and_no_file_counts_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _history_error([tmp_path], tmp_path / "out", capsys)
    assert "not a directory: name the files in it" in line
    table = tmp_path / "a.csv"  # without ids, a job listed twice cannot be told from two alike
    table.write_text(
        "Owner QDate CompletionDate RemoteWallClockTime\nann 1 200 100\nann 1 200 100\n"
    )
    (tmp_path / "link.csv").symlink_to(table)
    line = _history_error([table, tmp_path / "link.csv"], tmp_path / "out", capsys)
    assert line.endswith(f"link.csv: expected each history file named once (it is also {table})")
    assert not (tmp_path / "out" / "jobs.csv").exists()
    assert main(["trace", "history", str(table), "--out", str(tmp_path / "out")]) == 0
    assert len(read_jobs(tmp_path / "out" / "jobs.csv")) == 2


def test_a_global_job_id_names_a_job_without_cluster_id_in_every_file(tmp_path: Path) -> None:
    header = "GlobalJobId Owner QDate CompletionDate RemoteWallClockTime NumJobStarts\n"
    row = "ap1#7.{}#1 ann 1 200 100 1\n"
    one, rotated = tmp_path / "history", tmp_path / "history.old"
    one.write_text(header + row.format(0) + row.format(1))
    rotated.write_text(header + row.format(1))  # the same job 7.1, in the rotated file too
    assert main(["trace", "history", str(one), str(rotated), "--out", str(tmp_path)]) == 0
    assert read_jobs(tmp_path / "jobs.csv").job_id == ["7.0@ap1", "7.1@ap1"]


def test_a_job_that_completed_before_it_started_is_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ad whose ``CompletionDate`` precedes its ``JobCurrentStartDate`` has no run time to
    trust (not 0 s): the job is left out and counted, unless ``CommittedTime`` gives one."""
    path = tmp_path / "history.txt"
    path.write_text(
        "ClusterId ProcId Owner QDate JobStatus CompletionDate JobCurrentStartDate CommittedTime\n"
        "1 0 ann 1700000000 4 1700000500 1700000100 0\n"  # 400 s
        "2 0 ann 1700000000 4 1700000100 1700000900 0\n"  # backwards: left out
        "3 0 ann 1700000000 4 1700000100 1700000900 0\n"
        "4 0 ann 1700000000 4 1700000100 1700000900 300\n"  # CommittedTime decides
    )
    assert main(["trace", "history", str(path), "--out", str(tmp_path / "out")]) == 0
    jobs = read_jobs(tmp_path / "out" / "jobs.csv")
    assert dict(zip(jobs.job_id, jobs.runtime.tolist(), strict=True)) == {"1.0": 400, "4.0": 300}
    out = capsys.readouterr().out
    assert "wrote 2 jobs" in out
    assert (
        "left out: 2 jobs: completed before it started (CompletionDate before "
        "JobCurrentStartDate)\n"
    ) in out
