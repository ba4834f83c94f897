"""Monthly retraining inside a replay, with the past only; train-idle writes a loadable store."""

from __future__ import annotations

from pathlib import Path

import pytest
from tracekit import MONDAY, Recorder, inventory, trace

from advisor.cli import main
from advisor.lab.model_store import read_meta
from plugins.contract.policy import PolicyContext
from plugins.idle.policy import IdlePolicy
from simulator.campus.month_stats import month_starts
from simulator.campus.replay import build_policy, machine_infos, replay


class RetrainRecorder(Recorder):
    def __init__(self, context: PolicyContext, options: object = None) -> None:
        super().__init__(context)
        self.retrained: list[float] = []

    def retrain(self, now: float) -> None:
        self.retrained.append(now)


def test_replay_retrains_at_each_month_boundary() -> None:
    tr = trace(inventory(1), days=70)  # 4 January to 15 March 2010
    policy = RetrainRecorder(PolicyContext(machine_infos(tr)))
    replay(tr, policy)
    assert policy.retrained == month_starts(MONDAY, MONDAY + 70 * 86400.0)[1:]


@pytest.mark.slow
def test_small_campus_replay_trains_on_the_past_and_advises(tmp_path: Path) -> None:
    from simulator.campus.scenario import generate_campus, load_campus_config

    tr = generate_campus(load_campus_config(), days=45, scale=0.01, seed=3)
    policy = build_policy("idle-min", tr, {"max_samples": "60", "mlp_epochs": "3"}, seed=3)
    assert isinstance(policy, IdlePolicy)
    result = replay(tr, policy, seed=3)
    (log,) = policy.trainer.log  # one boundary (1 February) in 45 days
    assert log["until"] == month_starts(tr.start, tr.end)[1]
    assert 30 < log["history_days"] <= 31 and policy.models
    assert result.negotiator.matches > 0


def test_train_idle_writes_a_store_that_loads(tmp_path: Path) -> None:
    out = tmp_path / "models"
    args = ["train-idle", "--scenario", "campus", "--days", "40", "--scale", "0.01"]
    args += ["--until", "2010-02", "--set", "max_samples=50", "--set", "mlp_epochs=3"]
    assert main([*args, "--workers", "1", "--out", str(out)]) == 0
    meta = read_meta(out)
    assert meta["window"]["until"].startswith("2010-02-01") and (out / "models.pkl").stat().st_size
    assert main([*args[:-4], "--until", "2009-12", "--out", str(out)]) == 2


def test_idle_schedulers_writes_table_ii_relative_to_random(tmp_path: Path) -> None:
    args = ["experiment", "idle-schedulers", "--days", "35", "--scale", "0.01", "--workers", "1"]
    args += ["--policies", "random", "idle-min", "--set", "max_samples=40"]
    assert main([*args, "--set", "mlp_epochs=2", "--out", str(tmp_path)]) == 0
    rows = (tmp_path / "table2.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert {"policy", "energy_mwh", "wasted_mwh", "energy_pct_random"} <= set(header)
    random_row = next(r for r in rows[1:] if ",random," in r)
    assert random_row.split(",")[header.index("energy_pct_random")] == "100.0"
    assert (tmp_path / "fig6_overhead_energy.png").stat().st_size > 0
    assert any((tmp_path / "model-cache").rglob("*"))  # the fits are kept for the next ensemble
    cached = sorted((tmp_path / "model-cache").rglob("*"))
    again = ["experiment", "idle-accuracy", "--days", "35", "--scale", "0.01", "--workers", "1"]
    again += ["--set", "max_samples=40", "--set", "mlp_epochs=2", "--out", str(tmp_path)]
    assert main([*again, "--table2", str(tmp_path / "table2.csv")]) == 0
    # the trace-built history equals the replayed one: every fit came from the replay's cache
    assert sorted((tmp_path / "model-cache").rglob("*")) == cached
    assert "r2_rf" in (tmp_path / "accuracy.csv").read_text().splitlines()[0]
