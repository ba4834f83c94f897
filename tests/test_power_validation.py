"""Choosing the shipped or-ppo agent: validation days come from the training days only, the
test days are never played while training or selecting, and the kept agent is the admissible
candidate with the least validation waste."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from advisor.cli import main
from advisor.lab.power_checkpoints import best_path, checkpoint_path, load_checkpoint
from simulator.dedicated import episode, validation
from simulator.dedicated.catalog import catalogued, load_days
from simulator.dedicated.validation import Score, Selector, validation_split


def test_every_fifth_training_day_validates_and_the_rest_fit() -> None:
    fit, val = validation_split(list(range(23)), 5)  # type: ignore[arg-type]  # only len() used
    assert val == [4, 9, 14, 19]
    assert sorted(fit + val) == list(range(23)) and not set(fit) & set(val)
    assert validation_split(list(range(3)), 0) == ([0, 1, 2], [])  # type: ignore[arg-type]


def test_selector_keeps_the_least_waste_within_t0_bounds() -> None:
    state = {"t0": {"waste_kj": 100.0, "cycles_per_node": 10.0, "delay_s": 1.0, "unstarted": 0}}
    selector = Selector(state)
    assert selector.offer("over cycles", Score(50.0, 11.0, 0.0, 0))  # none admissible yet
    assert selector.offer("ok", Score(80.0, 9.0, 0.0, 0))  # admissible beats inadmissible
    assert not selector.offer("worse", Score(90.0, 5.0, 0.0, 0))
    assert not selector.offer("over waste", Score(101.0, 1.0, 0.0, 0))
    assert selector.offer("best", Score(70.0, 10.0, 300.0, 3))
    assert state["best"]["label"] == "best" and len(state["history"]) == 5


def test_training_and_selection_never_play_a_test_day(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = str(shared_data)
    train, test = load_days(catalogued("hpc2n", data))
    fit, val = validation_split(train, 13)
    played: list[int] = []
    real_init = episode.DayEpisode.__init__

    def recording_init(self: episode.DayEpisode, jobs, *args, **kwargs) -> None:
        played.append(id(jobs))
        real_init(self, jobs, *args, **kwargs)

    monkeypatch.setattr(episode.DayEpisode, "__init__", recording_init)
    common = ["train-power", "hpc2n", "--data-dir", data, "--out", str(tmp_path), "--workers", "1"]
    common += ["--val-stride", "13", "--val-interval", "1"]
    warm = [
        "--iterations",
        "0",
        "--imitate-days",
        "2",
        "--dagger-rounds",
        "1",
        "--dagger-days",
        "1",
    ]
    assert main(common + warm) == 0  # with one worker the warm start and validation run here
    by_id = {id(d.jobs): i for i, d in enumerate(train)}
    assert not {id(d.jobs) for d in test} & set(played)
    assert {by_id[j] for j in played} >= set(val)  # every validation day was played
    assert main([*common, "--iterations", "2"]) == 0  # PPO on fit days, validated each iteration
    _, _, meta = load_checkpoint(checkpoint_path(str(tmp_path), "hpc2n"))
    test_days = {d.index for d in test}
    assert set(meta["validation"]["days"]) == {train[p].index for p in val}
    assert not set(meta["validation"]["days"]) & test_days
    played_in_ppo = {i for c in meta["curve"] for i in c["days"]}
    assert played_in_ppo <= {train[p].index for p in fit}
    history = meta["validation"]["history"]
    assert [h["label"] for h in history] == [
        "warm round 0", "warm round 1", "iteration 1", "iteration 2",
    ]  # fmt: skip
    best = meta["validation"]["best"]
    pool = [h for h in history if h["admissible"]] or history
    assert best["waste_kj"] == min(h["waste_kj"] for h in pool)
    shipped, _, shipped_meta = load_checkpoint(best_path(str(tmp_path), "hpc2n"))
    assert shipped_meta["selected"] == best["label"]
    assert np.isfinite(shipped["w1"]).all()
    assert validation.DayEpisode is episode.DayEpisode
    table = ["experiment", "power-table", "--workloads", "hpc2n", "--max-days", "1", "--workers"]
    table += ["1", "--data-dir", data, "--out", str(tmp_path / "t"), "--agents", str(tmp_path)]
    assert main(table) == 0
    with open(tmp_path / "t" / "days.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["policy"] for r in rows} >= {"DS", "DS-bc", "DS-last"}  # shipped, warm, last
