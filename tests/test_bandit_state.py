"""A placement bandit's learned state survives save/restore: the next decisions are identical."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import cast

import pytest

from plugins.bandits.placement import PlacementBandit
from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.policy import MachineView, OptionError, PoolView, parse_options
from plugins.contract.registry import policy_class
from simulator.campus.replay import build_policy, replay
from simulator.campus.scenario import generate_campus, load_campus_config


@pytest.fixture(scope="module")
def campus():
    return generate_campus(load_campus_config(None), days=10, scale=0.03, seed=3)


@pytest.mark.parametrize("name", ["bandit-cluster", "bandit-computer", "bandit-system"])
def test_restored_policy_decides_exactly_as_the_saved_one(campus, name: str) -> None:
    options = {"epsilon": "0.3", "history": "gaussian:20"}
    trained = cast(PlacementBandit, build_policy(name, campus, options, seed=9))
    replay(campus, trained, seed=9)
    assert trained.agent.estimates  # it learned something
    saved = json.loads(json.dumps(trained.state_dict()))
    restored = build_policy(name, campus, options, seed=123)
    restored.load_state(saved)
    now = campus.end + 3600.0
    machines = [MachineView(name, "idle", now) for name in trained.context.machines]
    idle = tuple(3 if k % 2 == 0 else 0 for k in range(PRIOR_HOURS_CLASSES))
    for step in range(5):  # several cycles: the generator state was restored too
        t = now + step * 3600.0
        view = PoolView(machines, idle, new_jobs=[f"x{step}"])
        a, b = trained.advise(view, t), restored.advise(view, t)
        assert a.machines == b.machines


@pytest.mark.parametrize(("before", "after"), [("all", "last:50"), ("last:50", "all")])
def test_a_changed_history_option_carries_the_estimates_over(
    campus, before: str, after: str
) -> None:
    """An administrator changes ``history`` and restarts: the snapshot's estimates continue
    (before, ``all`` to ``last:N`` divided by zero, and the daemon set every snapshot aside and
    started over; ``last:N`` to ``all`` halved the estimates without a word)."""
    trained = cast(PlacementBandit, build_policy("bandit-cluster", campus, {"history": before}))
    replay(campus, trained, seed=9)
    saved = json.loads(json.dumps(trained.state_dict()))
    restored = cast(PlacementBandit, build_policy("bandit-cluster", campus, {"history": after}))
    restored.load_state(saved)
    for state, values in trained.agent.values.items():
        for action, value in values.items():
            kept = restored.agent.values[state][action]
            assert kept == pytest.approx(value)
            assert kept == pytest.approx(restored.agent.estimates[state][action].value)


def test_options_from_the_command_line_are_checked() -> None:
    cls = policy_class("bandit-cluster")
    parsed = parse_options(
        cls, {"epsilon": "0.05", "history": "last:500", "diverge": "0.5:100:0.3"}
    )
    assert parsed["epsilon"] == 0.05 and parsed["sigma"] == 0.8  # the paper's default sigma
    assert str(parsed["history"]) == "last:500" and parsed["diverge"].ratio == 0.5
    with pytest.raises(OptionError, match="epsilon"):
        parse_options(cls, {"epsilon": "2"})
    with pytest.raises(OptionError, match="history"):
        parse_options(cls, {"history": "recent"})


def test_a_bandit_replay_is_the_same_in_every_process() -> None:
    """Python salts str hashes per process; no set of names may steer a decision."""
    code = (
        "from simulator.campus.replay import build_policy, replay\n"
        "from simulator.campus.scenario import generate_campus, load_campus_config\n"
        "from simulator.campus.summary import summarize\n"
        "tr = generate_campus(load_campus_config(None), days=30, scale=0.05, seed=2)\n"
        "p = build_policy('bandit-cluster', tr, {'epsilon': '0.3'}, seed=2)\n"
        "s = summarize(replay(tr, p, seed=2))\n"
        "print(s['energy_mwh']['total'], s['overhead_min_mean'], s['jobs']['attempts'])\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": salt},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for salt in ("1", "2")
    }
    assert len(outputs) == 1, outputs


def test_a_class_never_left_queued_does_not_keep_every_job_it_saw() -> None:
    # a daemon's bandit that always runs class-0 jobs listed each one it was ever told of as
    # "without a queue decision", in memory and in every snapshot, for good
    from plugins.bandits.jobs import COMPACT_AT, JobMemory

    memory = JobMemory()
    for n in range(20 * COMPACT_AT):
        job = f"{n}.0"
        memory.enqueue(job)
        memory.start(job, (0, 0), "pc1")
        memory.end(job, 60.0, requeued=False)
        memory.finish(job)
    assert len(memory.unjudged[0]) <= COMPACT_AT + 1
    running = [f"r{n}.0" for n in range(3)]  # a running job may be queued again: it stays
    for job in running:
        memory.enqueue(job)
        memory.start(job, (0, 0), "pc1")
    for n in range(3 * COMPACT_AT):
        memory.enqueue(f"q{n}.0")
    assert set(running) <= set(memory.unjudged[0])
    memory.queue_decision(0, 1.0, (0, 0))
    assert len(memory.pending) == 3 * COMPACT_AT  # the queued ones, each once
