"""The control group end to end in the digital twin (bundled campus, 28 days, scale 0.1): the
replay with the same split predicts the daemon's report job for job; the report's effects
against the full-pool comparison of two replays (policy vs random), now that each arm has its own
machines; a harmful policy (defined here only) trips the guard within a simulated day and the
pool then gets neutral advice."""

from __future__ import annotations

import csv
import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import register_policy

from advisor.cli import main
from advisor.daemon.config import load_config
from advisor.daemon.signals import Control
from advisor.lab.twin import TwinPool
from advisor.lab.twin_run import TwinOptions, run_twin
from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice
from plugins.contract.policy import Policy, PoolView

H = 3600.0
POOL = {"kind": "sim", "scenario": "campus", "days": 28, "scale": 0.1, "seed": 1, "speed": "max"}
SCENARIO = ["--scenario", "campus", "--days", "28", "--scale", "0.1", "--seed", "1"]
SHIPPED_BOUND = ["--wait-bound", "24"]
"""The twin's pool applies the shipped ADVISOR_WAIT_BOUND (``pool.wait_bound``, a day)."""


def twin(tmp: Path, policy: str, control: dict[str, Any], stop_at: float = 2.0) -> Any:
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "advisor.yaml"
    config = {
        "pool": POOL,
        "policy": {"name": policy},
        "publish": {"listen": "127.0.0.1:0"},
        "state": {"directory": str(tmp / "state")},
        "control": {"percent": 10, **control},
    }
    path.write_text(yaml.safe_dump(config))
    stop = Control()

    def progress(fraction: float) -> None:
        if fraction >= stop_at:
            stop.stop.set()

    options = TwinOptions(out=tmp / "twin", config_path=path, on_progress=progress)
    return run_twin(load_config(path), stop, options)


def report(capsys: Any, *where: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", *where, "--json"]) == 0
    effects = json.loads(capsys.readouterr().out)["effects"]
    return {e["name"]: e for e in effects}


def full_pool(tmp: Path, policy: str) -> dict[str, float]:
    out = tmp / f"full-{policy}"
    replay = ["replay", *SCENARIO, *SHIPPED_BOUND, "--policy", policy]
    assert main([*replay, "--no-progress", "--out", str(out)]) == 0
    s = json.loads((out / "summary.json").read_text())
    per_job = s["energy_mwh"]["total"] * 1e6 / s["jobs"]["completed"]
    return {"energy per completed job": per_job, "overhead": s["overhead_min_mean"]}


@pytest.fixture(scope="module")
def effects(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Per policy: the twin's report, the replay's report, and the full-pool ratios (each
    computed once, for the tests of both figures)."""
    done: dict[str, Any] = {}

    def of(policy: str, capsys: Any) -> Any:
        if policy not in done:
            tmp = tmp_path_factory.mktemp(policy)
            twin(tmp, policy, {"guard": False})
            out = tmp / "replay"
            split = ["--control-percent", "10", "--no-progress", "--out", str(out)]
            assert main(["replay", *SCENARIO, *SHIPPED_BOUND, "--policy", policy, *split]) == 0
            assert (out / "jobs.csv").read_text() == (tmp / "twin" / "jobs.csv").read_text()
            live = report(capsys, "--state-dir", str(tmp / "state"))
            predicted = report(capsys, "--replay", str(out), "--png", str(tmp / "effect.png"))
            assert (tmp / "effect.png").stat().st_size > 1000
            random, full = full_pool(tmp, "random"), full_pool(tmp, policy)
            done[policy] = live, predicted, {n: full[n] / random[n] for n in full}
        return done[policy]

    return of


@pytest.mark.parametrize(
    ("policy", "figure"),
    [
        ("random", "energy per completed job"),
        ("frugal", "energy per completed job"),
        ("bandit-cluster", "energy per completed job"),
        ("random", "overhead"),
        ("frugal", "overhead"),
        ("bandit-cluster", "overhead"),
    ],
)
def test_report_predicted_by_the_replay_and_against_the_full_pool(
    effects: Any, capsys: Any, policy: str, figure: str
) -> None:
    live, predicted, full = effects(policy, capsys)
    for name, effect in live.items():
        # the same jobs; jobs.csv rounds overheads to the second
        assert effect["treated"] == pytest.approx(predicted[name]["treated"], rel=1e-4)
        assert effect["control"] == pytest.approx(predicted[name]["control"], rel=1e-4)
    effect = live[figure]
    assert effect["low"] <= full[figure] <= effect["high"], (figure, effect, full[figure])


class HoldFreed(Policy):
    """Harmful: whenever jobs arrive, holds every machine for the next three hours."""

    NAME = "hold-freed"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.until = 0.0

    def advise(self, view: PoolView, now: float) -> Advice:
        if view.new_jobs:
            self.until = now + 3 * H
        if now >= self.until:
            return Advice()
        held = MachineAdvice(hold=True, expires=self.until)
        return Advice(machines={m.name: held for m in view.machines})


@pytest.fixture
def harmful_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    register_policy(monkeypatch, HoldFreed)


def test_a_harmful_policy_trips_the_guard_within_a_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any, harmful_registered: None
) -> None:
    published: list[tuple[float, bool]] = []

    def publish(self: TwinPool, advice: Advice, now: float) -> None:
        self.delivered = True
        held = any(a != NEUTRAL_MACHINE_ADVICE for a in advice.machines.values())
        published.append((now, held))

    monkeypatch.setattr(TwinPool, "publish", publish)
    guard = {"guard_window": "1d", "guard_min_jobs": 10}
    with caplog.at_level(logging.WARNING, logger="htcondor_advisor.control"):
        outcome = twin(tmp_path, HoldFreed.NAME, guard)
    assert outcome.finished
    trips = [
        dt.datetime.fromisoformat(r.getMessage().split("withheld at ")[1][:20]).timestamp()
        for r in caplog.records
        if "withheld at" in r.getMessage()
    ]
    first_held = next(t for t, held in published if held)
    evidence = enough_completions(tmp_path / "twin" / "jobs.csv", 10, 24 * H)
    assert first_held <= evidence <= trips[0] <= evidence + 24 * H, (trips, evidence, first_held)
    releases = [r for r in caplog.records if "advice resumes" in r.getMessage()]
    end = (
        dt.datetime.fromisoformat(releases[0].getMessage().split("resumes at ")[1][:20]).timestamp()
        if releases
        else float("inf")
    )
    after = [held for t, held in published if trips[0] < t < end]
    assert after and not any(after)  # neutral advice only, until the guard releases


def test_a_resumed_twin_guards_as_the_uninterrupted_one(
    tmp_path: Path, harmful_registered: None
) -> None:
    """The pool re-simulated up to the snapshot withholds advice when the stopped daemon did."""
    guard = {"guard_window": "1d", "guard_min_jobs": 10}
    assert twin(tmp_path / "a", HoldFreed.NAME, guard).finished
    assert not twin(tmp_path / "b", HoldFreed.NAME, guard, stop_at=0.4).finished
    assert twin(tmp_path / "b", HoldFreed.NAME, guard).finished
    jobs = [(tmp_path / d / "twin" / "jobs.csv").read_text() for d in ("a", "b")]
    assert jobs[0] == jobs[1]


def enough_completions(jobs: Path, count: int, window: float) -> float:
    """The first time each arm has ``count`` jobs completed within the preceding ``window``."""
    with jobs.open() as fh:
        done = sorted((float(r["finish"]), r["arm"]) for r in csv.DictReader(fh) if r["finish"])
    for i, (t, _) in enumerate(done):
        recent = [arm for f, arm in done[: i + 1] if f >= t - window]
        if min(recent.count("control"), recent.count("treated")) >= count:
            return t
    return float("inf")
