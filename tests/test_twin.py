"""The digital twin: same figures as a replay, and a resumed run continues what it learned."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import register_policy

from advisor.cli import main
from advisor.daemon.config import check_config
from advisor.daemon.signals import Control
from advisor.lab.twin_run import TwinOptions, run_twin
from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.events import AttemptEnded, AttemptOutcome
from plugins.contract.policy import Policy, PoolView

SCENARIO = ["--days", "3", "--scale", "0.05", "--seed", "3"]
SHIPPED_BOUND = ["--wait-bound", "24"]
"""The twin's pool applies the shipped ADVISOR_WAIT_BOUND (``pool.wait_bound``, a day)."""


def figures(path: Path) -> dict[str, Any]:
    summary = json.loads((path / "summary.json").read_text())
    for key in ("wall_s", "events_per_s"):
        summary["sim"].pop(key)
    return summary


@pytest.mark.parametrize("policy", ["random", "crystal", "bandit-cluster", "frugal"])
def test_twin_ends_with_the_replay_figures(tmp_path: Path, policy: str) -> None:
    common = [*SCENARIO, "--policy", policy]
    replay = ["replay", "--scenario", "campus", *common, *SHIPPED_BOUND]
    assert main([*replay, "--out", str(tmp_path / "r")]) == 0
    twin = ["run", "--pool", "sim:campus", "--speed", "max", "--listen", "127.0.0.1:0"]
    assert main([*twin, *common, "--out", str(tmp_path / "t")]) == 0
    assert figures(tmp_path / "t") == figures(tmp_path / "r")
    assert (tmp_path / "t" / "jobs.csv").read_text() == (tmp_path / "r" / "jobs.csv").read_text()
    assert list((tmp_path / "t" / "state").glob("snapshot-*.json"))


def test_a_dry_run_twin_leaves_the_pool_as_without_the_advisor(tmp_path: Path) -> None:
    """Nothing reaches the twin's sink, so the pool matches as with no advice at all (the
    negotiator reads the daemon's ledger only while the daemon publishes)."""
    none = ["replay", "--scenario", "campus", *SCENARIO, "--policy", "random", *SHIPPED_BOUND]
    assert main([*none, "--out", str(tmp_path / "r")]) == 0
    twin = ["run", "--pool", "sim:campus", "--speed", "max", "--listen", "127.0.0.1:0"]
    dry = [*twin, *SCENARIO, "--policy", "bandit-cluster", "--dry-run"]
    assert main([*dry, "--out", str(tmp_path / "t")]) == 0
    assert (tmp_path / "t" / "jobs.csv").read_text() == (tmp_path / "r" / "jobs.csv").read_text()


class EvictionCounter(Policy):
    """A small learning policy: ranks machines by how rarely they evicted a job."""

    NAME = "eviction-counter"
    WANTS = frozenset({AttemptEnded})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.evictions: Counter[str] = Counter()
        self.observed = 0

    def observe(self, event: Any) -> None:
        self.observed += 1
        if event.outcome is AttemptOutcome.EVICTED_OWNER:
            self.evictions[event.machine] += 1

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(
            {m.name: MachineAdvice(rank=-float(self.evictions[m.name])) for m in view.machines}
        )

    def state_dict(self) -> dict[str, Any]:
        return {"evictions": dict(self.evictions), "observed": self.observed}

    def load_state(self, state: Any) -> None:
        self.evictions = Counter(state["evictions"])
        self.observed = state["observed"]


@pytest.fixture
def counter_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    register_policy(monkeypatch, EvictionCounter)


def _twin(state: Path, control: Control, stop_at: float | None = None) -> Any:
    config = check_config(
        {
            "pool": {"kind": "sim", "days": 4, "scale": 0.05, "seed": 5},
            "policy": {"name": "eviction-counter"},
            "publish": {"listen": "127.0.0.1:0"},
            "state": {"directory": str(state), "snapshot_interval": "6h"},
        }
    )

    def progress(fraction: float) -> None:
        if stop_at is not None and fraction >= stop_at:
            control.stop.set()

    return run_twin(config, control, TwinOptions(on_progress=progress))


@pytest.mark.usefixtures("counter_registered")
def test_stopped_twin_resumes_its_learning_from_the_snapshot(tmp_path: Path) -> None:
    whole = _twin(tmp_path / "whole", Control())
    half = _twin(tmp_path / "split", Control(), stop_at=0.5)
    assert not half.finished and half.summary is None
    learned_at_stop = half.daemon.host.policy.observed
    assert 0 < learned_at_stop < whole.daemon.host.policy.observed
    resumed = _twin(tmp_path / "split", Control())
    assert resumed.finished
    policy = resumed.daemon.host.policy
    assert policy.observed == whole.daemon.host.policy.observed  # counts continued, none twice
    assert policy.evictions == whole.daemon.host.policy.evictions
    for key in ("energy_mwh", "jobs", "evictions"):
        assert resumed.summary[key] == whole.summary[key]


class HoldAll(Policy):
    """Holds every machine, always: only the starvation bound lets a job start."""

    NAME = "hold-all"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice({m.name: MachineAdvice(hold=True) for m in view.machines})


@pytest.mark.parametrize("bound", ["shipped", None])
def test_the_twin_pool_applies_the_shipped_starvation_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: str | None
) -> None:
    """As deployed (``ADVISOR_WAIT_BOUND``, a day) a job held a day starts as without advice;
    ``pool.wait_bound: null`` models a pool without the bound, where no job ever starts."""
    register_policy(monkeypatch, HoldAll)
    pool: dict[str, Any] = {"kind": "sim", "days": 3, "scale": 0.05, "seed": 3}
    if bound is None:
        pool["wait_bound"] = None
    config = check_config(
        {
            "pool": pool,
            "policy": {"name": HoldAll.NAME},
            "publish": {"listen": "127.0.0.1:0"},
            "state": {"directory": str(tmp_path / "state")},
        }
    )
    assert run_twin(config, Control(), TwinOptions(out=tmp_path / "t")).finished
    with (tmp_path / "t" / "jobs.csv").open() as fh:
        done = [row for row in csv.DictReader(fh) if row["finish"]]
    if bound is None:
        assert not done
    else:
        assert done and all(row["released"] == "1" for row in done)
        waits = [float(r["finish"]) - float(r["submit"]) for r in done]
        assert min(waits) > 86400  # (none started before its day's wait)


def test_the_twin_does_not_say_its_job_advice_goes_unpublished(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # it warned "which no configured sink publishes (pool.edit_jobs: true ...)", a key the twin
    # refuses, while its negotiator applied that job advice all along
    twin = ["run", "--pool", "sim:campus", "--speed", "max", "--listen", "127.0.0.1:0"]
    with caplog.at_level("WARNING"):
        fortnight = ["--days", "14", "--scale", "0.05", "--seed", "3", "--policy", "frugal"]
        assert main([*twin, *fortnight, "--out", str(tmp_path / "t")]) == 0
    assert "no configured sink publishes" not in caplog.text
