"""``experiment shapes``: every member replayed in the slot layout asked for, the table against
random and crystal, and the plot."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from advisor.cli import main


@pytest.mark.parametrize("slots", ["single", "partitionable"])
def test_shapes_replays_each_member_in_the_layout_asked(tmp_path: Path, slots: str) -> None:
    args = ["experiment", "shapes", "--shapes", "small-college,campus", "--scales", "0.03"]
    args += ["--seeds", "1", "--days", "7", "--policies", "frugal", "--workers", "1"]
    assert main([*args, "--slots", slots, "--out", str(tmp_path)]) == 0
    with (tmp_path / "shapes_runs.csv").open() as fh:
        runs = list(csv.DictReader(fh))
    assert {(r["shape"], r["policy"]) for r in runs} == {
        (shape, policy)
        for shape in ("small-college", "campus")
        for policy in ("random", "crystal", "frugal")
    }
    assert {r["slots"] for r in runs} == {slots}
    with (tmp_path / "shapes.csv").open() as fh:
        table = list(csv.DictReader(fh))
    for row in table:
        if row["policy"] == "crystal":
            assert float(row["saving_share"]) == 1.0
        assert float(row["energy_vs_random"]) > 0 and float(row["overhead_vs_random"]) > 0
    assert (tmp_path / "shapes.png").stat().st_size > 1000
