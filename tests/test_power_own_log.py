"""A site's own log for the power policies: the cluster's shape from the SWF header, what is left
out and said, the days and their split on a log built by hand, and exported jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.cli import main
from simulator.dedicated.catalog import load_days
from simulator.dedicated.own_log import exported_cluster, swf_cluster
from simulator.traces.errors import TraceError

DAY = 86400


def swf(path: Path, header: list[str], jobs: list[tuple[int, int, int, int]]) -> Path:
    """An SWF file: ``jobs`` as (submit s, run s, processors, partition)."""
    lines = [f"; {h}" for h in header]
    for n, (submit, run, procs, part) in enumerate(jobs, start=1):
        fields = [n, submit, 0, run, procs, -1, -1, procs, 2 * run, -1, 1, 1, 1, -1, 1, part]
        lines.append(" ".join(str(f) for f in [*fields, -1, -1]))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_nodes_and_cores_come_from_the_header_even_with_a_partition_note(tmp_path: Path) -> None:
    header = ["UnixStartTime: 0", "MaxNodes: 338 (batch partition; 512 total)", "MaxProcs: 676"]
    log, notes = swf_cluster(str(swf(tmp_path / "ctc.swf", header, [(0, 60, 4, 1)] * 2)))
    assert (log.nodes, log.cores_per_node, log.name) == (338, 2, "ctc")
    assert notes[0] == "ctc: 338 nodes x 2 cores"
    given, _ = swf_cluster(log.path, nodes=100, cores_per_node=8)
    assert (given.nodes, given.cores_per_node) == (100, 8)


def test_a_header_without_a_usable_shape_names_the_flag_and_the_file(tmp_path: Path) -> None:
    bare = swf(tmp_path / "bare.swf", ["UnixStartTime: 0"], [(0, 60, 4, 1)] * 2)
    with pytest.raises(TraceError, match=r"bare\.swf: field 'MaxNodes': expected .*--nodes N"):
        swf_cluster(str(bare))
    odd = swf(tmp_path / "odd.swf", ["MaxNodes: 10", "MaxProcs: 25"], [(0, 60, 4, 1)] * 2)
    with pytest.raises(TraceError, match=r"a multiple of the 10 nodes, or --cores-per-node C"):
        swf_cluster(str(odd))
    out = tmp_path / "runs"
    assert main(["train-power", "--swf", str(bare), "--out", str(out)]) == 2
    assert main(["train-power", "nasa", "--nodes", "5", "--out", str(out)]) == 2
    assert main(["train-power", "nasa", "--swf", str(odd), "--nodes", "5", "--out", str(out)]) == 2


def test_jobs_the_cluster_cannot_run_are_left_out_and_said_with_their_line(tmp_path: Path) -> None:
    jobs = [(0, 60, 2, 1), (600, -1, 2, 1), (1200, 60, 9, 2), (1800, 60, 2, 2)] + [
        (2 * DAY + 600 * k, 60, 1, 1) for k in range(3)
    ]
    path = swf(tmp_path / "site.swf", ["MaxNodes: 4", "MaxProcs: 8"], jobs)
    log, notes = swf_cluster(str(path))
    assert f"{path}:4: 1 jobs without a run time left out" in notes  # 2 header lines, job 2
    assert f"{path}:5: 1 jobs larger than the cluster (8 cores) left out" in notes
    assert "partitions 1, 2 are played as one cluster; --partition P keeps one" in notes
    assert "1 days without arrivals are skipped (longest gap 1 days)" in notes
    train, test = load_days(log)
    assert sorted(len(d.jobs) for d in train + test) == [2, 3]  # day 0: jobs 1 and 4
    one, _ = swf_cluster(str(path), partition=2)
    assert load_days(one) == ([], [])  # one playable job: no day
    with pytest.raises(TraceError, match="one of the log's partitions"):
        swf_cluster(str(path), partition=7)


def test_a_log_built_by_hand_gives_its_days_and_a_seeded_80_20_split(tmp_path: Path) -> None:
    # 12 days at local midnight (TimeZone -3600 moves unix 3600 to 00:00); day 5 has one job
    # (no episode), day 8 none (a gap); jobs 10 minutes apart: group 1, none sequential
    header = ["UnixStartTime: 3600", "TimeZone: -3600", "MaxNodes: 16", "MaxProcs: 16"]
    jobs = [
        (d * DAY + 600 * k, 300, 1, 1)
        for d in range(12)
        if d != 8
        for k in range(1 if d == 5 else 4)
    ]
    log, _ = swf_cluster(str(swf(tmp_path / "hand.swf", header, jobs)))
    train, test = load_days(log)
    days = sorted(d.index for d in train + test)
    assert days == [0, 1, 2, 3, 4, 6, 7, 9, 10, 11]
    assert all(d.group == 1 and len(d.jobs) == 4 for d in train + test)
    assert len(test) == 2 and not {d.index for d in train} & {d.index for d in test}
    assert [d.jobs.arrival[0] for d in train + test] == [0.0] * 10  # each day starts at midnight
    table = ["experiment", "power-table", "--swf", log.path, "--splits", "test", "--workers", "1"]
    table += ["--policies", "T(0)", "T(5)", "DS", "--out", str(tmp_path / "t")]
    assert main([*table, "--agents", str(tmp_path / "none")]) == 0  # no agent: DS left out
    assert (tmp_path / "t" / "day-hand.png").stat().st_size > 0
    rows = (tmp_path / "t" / "days.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2 and all(",test," in r for r in rows[1:])  # 2 policies x 2 days
    again = load_days.__wrapped__(log, 0)  # read anew, not the cached days
    assert [d.index for d in again[1]] == [d.index for d in test]
    seeds = {tuple(d.index for d in load_days.__wrapped__(log, s)[1]) for s in range(6)}
    assert len(seeds) > 1  # the held-out days depend on the seed


def test_a_live_pools_exported_jobs_play_on_its_machines(tmp_path: Path) -> None:
    (tmp_path / "machines.yaml").write_text(
        "types:\n  node: {cores: 4, active: 190, idle: 95, sleep: 5}\n"
        "clusters:\n  room: {hours: '00:00-24:00'}\n"
        "machines:\n"
        + "".join(f"  - {{name: n{i}, cluster: room, type: node}}\n" for i in range(6))
    )
    rows = ["submit,job_id,user,runtime,remove,cpus"]
    rows += [f"{600 * k},1.{k},alice,400,,2" for k in range(5)]
    rows += ["4000,2.0,bob,,9000,1", "5000,3.0,bob,60,,64"]
    (tmp_path / "jobs.csv").write_text("\n".join(rows) + "\n")
    log, notes = exported_cluster(str(tmp_path / "jobs.csv"))
    assert (log.nodes, log.cores_per_node) == (6, 4)
    assert any("1 jobs that never completed left out" in n for n in notes)
    assert any("1 jobs too large left out" in n for n in notes)
    train, test = load_days(log)
    (day,) = train + test
    assert len(day.jobs) == 5 and day.jobs.walltime[0] == 900.0  # the usual request above 400 s
