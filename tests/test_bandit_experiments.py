"""The paper experiments run end to end on a tiny campus and write their CSV and plots."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from advisor.cli import main

TINY = ["--scale", "0.02", "--days", "5", "--workers", "1"]
CASES = {
    "epsilon-sigma": (["--epsilons", "0.1", "--sigmas", "0.8"], "epsilon_sigma.csv", 2),
    "history": (["--sizes", "10"], "history.csv", 4),
    "replicas": (["--fractions", "0.5", "--penalties", "contender"], "replicas.csv", 10),
    "replica-q": ([], "replica_q.csv", 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_experiment_writes_csv_and_plots(name: str, tmp_path: Path) -> None:
    extra, table, min_rows = CASES[name]
    assert main(["experiment", name, *TINY, *extra, "--out", str(tmp_path)]) == 0
    with (tmp_path / table).open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= min_rows
    assert list(tmp_path.glob("*.png"))


def test_bandit_options_via_set_reach_the_policy(tmp_path: Path) -> None:
    base = ["replay", "--scenario", "campus", "--days", "2", "--scale", "0.03", "--no-progress"]
    bandit = [*base, "--policy", "bandit-cluster"]
    assert main([*bandit, "--set", "epsilon=2", "--out", str(tmp_path / "bad")]) == 2
    written = []
    for epsilon in ("0", "1"):  # never and always exploring: other placements
        out = tmp_path / epsilon
        assert main([*bandit, "--set", f"epsilon={epsilon}", "--out", str(out)]) == 0
        written.append((out / "jobs.csv").read_bytes())
    assert written[0] != written[1]
