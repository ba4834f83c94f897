"""``experiment shapes``: every member replayed in the slot layout asked for, the table against
random and crystal, and the plot."""

from __future__ import annotations

import argparse
import csv
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from advisor.cli import main
from advisor.lab.experiments.shapes import members
from simulator.sources import thinned
from simulator.trace_model import Jobs


def test_shapes_replays_each_member_in_the_layout_asked(tmp_path: Path) -> None:
    busy = {}
    for slots in ("single", "partitionable"):
        out = tmp_path / slots
        args = ["experiment", "shapes", "--shapes", "small-college,campus", "--scales", "0.03"]
        args += ["--seeds", "1", "--days", "7", "--policies", "frugal", "--workers", "1"]
        assert main([*args, "--slots", slots, "--out", str(out)]) == 0
        with (out / "shapes_runs.csv").open() as fh:
            runs = list(csv.DictReader(fh))
        assert {(r["shape"], r["policy"]) for r in runs} == {
            (shape, policy)
            for shape in ("small-college", "campus")
            for policy in ("random", "crystal", "frugal")
        }
        assert {r["slots"] for r in runs} == {slots}
        busy[slots] = {(r["shape"], r["policy"]): float(r["cores_busy_share"]) for r in runs}
        with (out / "shapes.csv").open() as fh:
            table = list(csv.DictReader(fh))
        for row in table:
            if row["policy"] == "crystal":
                assert float(row["saving_share"]) == 1.0
            assert float(row["energy_vs_random"]) > 0 and float(row["overhead_vs_random"]) > 0
            for figure in ("overhead_vs_random", "saving_share"):
                low, high = float(row[f"{figure}_low"]), float(row[f"{figure}_high"])
                assert low <= high or (math.isnan(low) and math.isnan(high))  # NaN: one day
        assert (out / "shapes.png").stat().st_size > 1000
    # the layout reached the replays: a partitionable machine's cores are busy a smaller share
    # of the time (several cores, jobs packed), not only the column that names it
    assert all(busy["partitionable"][k] < busy["single"][k] for k in busy["single"])


def test_set_passes_an_option_to_one_policy_and_names_a_mistake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["experiment", "shapes", "--shapes", "small-college", "--scales", "0.03", "--seeds"]
    args += ["1", "--days", "7", "--policies", "frugal", "--workers", "1"]
    assert main([*args, "--set", "frugal.payback=off", "--out", str(tmp_path)]) == 0
    with (tmp_path / "shapes_runs.csv").open() as fh:
        options = {r["policy"]: r["options"] for r in csv.DictReader(fh)}
    assert options == {"random": "", "crystal": "", "frugal": "payback=off"}
    for wrong, said in (
        ("bandit-cluster.epsilon=0.1", "POLICY one of --policies (frugal)"),
        ("frugal.payback", "expected POLICY.KEY=VALUE"),
        ("frugal.payback=never", "option payback='never': must be mean, spread or off"),
        ("frugal.speed=9", "unknown option 'speed'"),
    ):
        capsys.readouterr()
        assert main([*args, "--set", wrong, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    agentless = ["--policies", "or-ppo", "--set", "or-ppo.agent=/nope.npz"]
    for given, said in (
        (["--policies", "frugal,nope"], "unknown policy 'nope'"),
        (["--policies", "edf"], "not campus"),
        (agentless, "agent '/nope.npz': no such file and no shipped agent of that name"),
        (["--policies", "or-ppo"], "--set or-ppo.agent: policy 'or-ppo' needs a trained agent"),
    ):
        assert main([*args, *given, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x").exists()  # refused before any replay
    # a shipped agent by its name is read for each replay, as replay --set agent=nasa does
    shipped = ["--policies", "or-ppo", "--set", "or-ppo.agent=nasa", "--out", str(tmp_path / "a")]
    assert main([*args, *shipped]) == 0


def test_no_job_edits_replays_the_policies_and_not_the_baselines_without_them(
    tmp_path: Path,
) -> None:
    # random gives no job advice and crystal is the achievable bound: only frugal is replayed as
    # a pool where the daemon does not edit jobs (docs/robust-policies.md)
    args = ["experiment", "shapes", "--shapes", "campus", "--scales", "0.03", "--seeds", "1"]
    args += ["--days", "7", "--policies", "frugal", "--workers", "1", "--no-job-edits"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    with (tmp_path / "shapes_runs.csv").open() as fh:
        edits = {r["policy"]: r["job_edits"] for r in csv.DictReader(fh)}
    assert edits == {"random": "True", "crystal": "True", "frugal": "False"}


def test_a_shapes_file_of_the_users_own_is_replayed_and_a_missing_one_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an administrator judges a policy on pools shaped like theirs: the file's ranges reach the
    # replays (an empty shape is the bundled campus, so it must give campus's figures exactly)
    args = ["experiment", "shapes", "--scales", "0.03", "--seeds", "1", "--days", "7"]
    args += ["--policies", "frugal", "--workers", "1"]
    shapes = tmp_path / "mine.yaml"
    shapes.write_text("copy: {}\nsmall-night-owls: {machines: 300, owner_intensity: 2.0}\n")

    def random_mwh(out: Path) -> dict[str, str]:
        with (out / "shapes_runs.csv").open() as fh:
            return {
                r["shape"]: r["total_mwh"] for r in csv.DictReader(fh) if r["policy"] == "random"
            }

    assert main([*args, "--shapes", "campus", "--out", str(tmp_path / "campus")]) == 0
    assert main([*args, "--shapes-file", str(shapes), "--out", str(tmp_path / "mine")]) == 0
    bundled, mine = random_mwh(tmp_path / "campus"), random_mwh(tmp_path / "mine")
    assert set(mine) == {"copy", "small-night-owls"}
    assert mine["copy"] == bundled["campus"]
    assert mine["small-night-owls"] != bundled["campus"]
    capsys.readouterr()
    missing = [*args, "--shapes-file", "nope.yaml", "--out", str(tmp_path / "x")]
    assert main(missing) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        f"--shapes-file: no such file: nope.yaml; check the path (relative to {Path.cwd()})"
    ), err
    assert not (tmp_path / "x").exists()


def test_the_summary_names_a_member_whose_longest_wait_passes_randoms_by_more_than_the_bound() -> (
    None
):
    from advisor.lab.experiments.shapes import waits_past_random

    def member(seed: int, longest: float) -> dict[str, object]:
        return {"shape": "unseen", "scale": 0.25, "seed": seed, "overhead_max_min": longest,
                "random_overhead_max_min": 4258.0}  # fmt: skip

    # a day's bound and one negotiation cycle: 4258 + 1440 + 1 is the most a member may reach
    within, beyond = member(1, 4258.0 + 1441.0), member(8, 6576.0)
    assert waits_past_random([within], 24.0).endswith("bound: none")
    assert waits_past_random([within, beyond], 24.0).endswith(
        "bound: unseen 0.25 seed 8 by 2318 min"
    )
    assert waits_past_random([beyond], 0.0) == ""  # no bound asked, nothing to hold it to


def test_a_pools_own_jobs_replace_every_members_and_another_file_is_replayed_anew(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an administrator replays their history (`trace history`) on every shape: the file's jobs,
    # from years before the campus, are moved into each member's first week and replayed there
    args = ["experiment", "shapes", "--shapes", "small-college,campus", "--scales", "1"]
    args += ["--seeds", "1", "--days", "7", "--policies", "frugal", "--workers", "1"]
    jobs = tmp_path / "jobs.csv"
    rows = ["submit,job_id,user,runtime,remove", "1262592000,1.0,alice,3600,"]
    rows += ["1262592060,1.1,alice,3600,", "1262595000,2.0,bob,,1262599000"]
    jobs.write_text("\n".join(rows) + "\n")

    def submitted(out: Path) -> set[tuple[str, str, str]]:
        with (out / "shapes_runs.csv").open() as fh:
            return {(r["shape"], r["policy"], r["jobs_submitted"]) for r in csv.DictReader(fh)}

    out = tmp_path / "out"
    assert main([*args, "--jobs", str(jobs), "--out", str(out)]) == 0
    every = {(s, p) for s in ("small-college", "campus") for p in ("random", "crystal", "frugal")}
    assert submitted(out) == {(s, p, "3") for s, p in every}
    # the same command with another file in the same place: its results, not the first file's
    jobs.write_text("\n".join(rows[:2]) + "\n")
    assert main([*args, "--jobs", str(jobs), "--out", str(out)]) == 0
    assert submitted(out) == {(s, p, "1") for s, p in every}
    # at scale 0.03 a share of the file's batches is kept, and none of these two
    assert main([*args[:5], "0.03", *args[6:], "--out", str(tmp_path / "own")]) == 0
    assert all(int(n) > 3 for _, _, n in submitted(tmp_path / "own"))
    capsys.readouterr()
    for text, said in (
        ("submit,job_id,user,runtime,remove\n", "lists no jobs"),
        ("submit,job_id,user,runtime,remove\n12,1.0,alice,abc,\n", "jobs.csv:2: field 'runtime'"),
        ("\n".join(rows[:2]) + "\n", "has no job left at scale 0.03; give a larger --scales"),
    ):
        jobs.write_text(text)
        scales = ["--scales", "1,0.03"]
        assert main([*args, *scales, "--jobs", str(jobs), "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x").exists()


def test_a_history_whose_jobs_never_complete_gives_a_table_without_overhead_ratios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every job of the file is removed by its user: no placement completes one, so there is no
    # overhead to compare, and the table says so rather than the command ending in a traceback
    jobs = tmp_path / "jobs.csv"
    rows = ["submit,job_id,user,runtime,remove", "1262595600,1.0,alice,,1262599200"]
    jobs.write_text("\n".join([*rows, "1262595600,1.1,alice,,1262599200"]) + "\n")
    args = ["experiment", "shapes", "--shapes", "small-college", "--scales", "1", "--seeds", "1"]
    args += ["--days", "7", "--policies", "frugal", "--workers", "1", "--jobs", str(jobs)]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    with (tmp_path / "out" / "shapes.csv").open() as fh:
        table = list(csv.DictReader(fh))
    assert {r["policy"] for r in table} == {"crystal", "frugal"}
    assert all(math.isnan(float(r["overhead_vs_random"])) for r in table)
    said = capsys.readouterr().out.splitlines()[-1]
    assert "passes 0 of 1 members; worst overhead n/a (none on 1: no job completed)" in said


def test_a_scale_keeps_that_share_of_a_historys_batches_whole_and_always_the_same() -> None:
    ids = [f"{cluster}.{proc}@ap1" for cluster in range(1, 2001) for proc in range(3)]
    jobs = Jobs(ids, ["u"] * len(ids), np.arange(len(ids), dtype=float), *(np.ones(len(ids)),) * 2)
    kept, note = thinned(jobs, 0.25)
    clusters = Counter(job.split(".")[0] for job in kept.job_id)
    assert 400 < len(clusters) < 600 and set(clusters.values()) == {3}  # whole batches
    assert np.all(np.diff(kept.submit) > 0) and kept.job_id == thinned(jobs, 0.25)[0].job_id
    assert (
        note
        == f"--scale 0.25 kept {len(kept)} of 6000 jobs ({len(clusters)} of 2000 batches)"
        + (", as the machines shrink")
    )
    assert set(thinned(jobs, 0.5)[0].job_id) >= set(kept.job_id)  # a larger scale keeps more
    assert thinned(jobs, 1.0) == (jobs, "")


def test_a_seed_or_scale_named_twice_is_one_member() -> None:
    # --seeds 1,1 replayed each member twice and wrote its rows twice in shapes_runs.csv
    args = argparse.Namespace(
        shapes_file=None, shapes="campus", scales=[0.25, 0.25, 1.0], seeds=[1, 2, 1]
    )
    assert members(args) == [
        ("campus", "", 0.25, 1),
        ("campus", "", 0.25, 2),
        ("campus", "", 1.0, 1),
        ("campus", "", 1.0, 2),
    ]
