"""The power-table experiment end to end (small), and or-ppo's weights surviving a round trip."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from dedicatedkit import random_workload, tiny_agent

from advisor.cli import main
from plugins.contract.policy import PolicyContext
from plugins.power.or_ppo import OrPpoPolicy
from simulator.dedicated.episode import DayEpisode


@pytest.mark.realdata
def test_power_table_writes_table3_and_fig6(shared_data: Path, tmp_path: Path) -> None:
    args = ["experiment", "power-table", "--workloads", "hpc2n", "--max-days", "1"]
    args += ["--workers", "1", "--data-dir", str(shared_data), "--out", str(tmp_path)]
    assert main([*args, "--agents", str(tmp_path / "no-agents")]) == 0
    with open(tmp_path / "table3.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(r["policy"], r["split"]) for r in rows} == {  # DS: the shipped hpc2n agent
        (p, s) for p in ("T(0)", "T(1)", "T(5)", "OR*", "DS") for s in ("train", "test")
    }
    for r in rows:
        assert float(r["waste_kj_min"]) <= float(r["waste_kj_avg"]) <= float(r["waste_kj_max"])
    t0 = {r["split"]: r for r in rows if r["policy"] == "T(0)"}
    t5 = {r["split"]: r for r in rows if r["policy"] == "T(5)"}
    for split in ("train", "test"):  # longer timeouts idle longer and cycle less
        assert float(t5[split]["waste_kj_avg"]) >= float(t0[split]["waste_kj_avg"])
        assert float(t5[split]["cycles_per_node_avg"]) <= float(t0[split]["cycles_per_node_avg"])
    assert (tmp_path / "fig6.png").stat().st_size > 0


def test_or_ppo_decides_the_same_after_a_state_round_trip() -> None:
    jobs = random_workload(np.random.default_rng(5), 4, 2, 30)
    first = OrPpoPolicy(PolicyContext({}, seed=1), {"agent": tiny_agent(1)})
    a = DayEpisode(jobs)
    decisions = [first.advise(a.view(), 0.0) for _ in range(3)]
    second = OrPpoPolicy(PolicyContext({}, seed=99), {"agent": "restored below"})
    second.load_state(first.state_dict())
    b = DayEpisode(jobs)
    assert [second.advise(b.view(), 0.0) for _ in range(3)] == decisions
