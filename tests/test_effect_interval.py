"""The report's intervals are honest: with random placement in both arms (an A/A test) the true
effect is 1, so a 95% interval must cover 1 on nearly every pool. Twenty small campus pools
(28 days, scale 0.1, a 10% control group of 14 machines, seeds 1 to 20): resampling machines
alone covered 1 for the overhead on 15 of them; resampling days and machines covers it on all.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import TypedDict

from advisor.cli import main

SEEDS = range(1, 21)


class Effect(TypedDict):
    """The fields of a row of ``report --json``'s effects this test reads."""

    name: str
    low: float
    high: float


def a_a_effects(out: Path, seed: int) -> list[Effect]:
    scenario = ["--scenario", "campus", "--days", "28", "--scale", "0.1", "--seed", str(seed)]
    split = ["--policy", "random", "--control-percent", "10", "--no-progress", "--out", str(out)]
    text = io.StringIO()
    with redirect_stdout(text):
        assert main(["replay", *scenario, *split]) == 0
    text = io.StringIO()
    with redirect_stdout(text):
        assert main(["report", "--replay", str(out), "--json"]) == 0
    effects: list[Effect] = json.loads(text.getvalue())["effects"]
    return effects


def test_a_a_intervals_cover_no_effect_on_at_least_18_of_20_pools(tmp_path: Path) -> None:
    covered = {"energy per completed job": 0, "overhead": 0}
    for seed in SEEDS:
        for effect in a_a_effects(tmp_path / str(seed), seed):
            covered[effect["name"]] += effect["low"] <= 1.0 <= effect["high"]
    assert all(n >= 18 for n in covered.values()), covered
