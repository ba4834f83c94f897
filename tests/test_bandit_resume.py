"""A bandit restored from its snapshot mid-run continues exactly like the uninterrupted one.

The daemon snapshots a policy with ``state_dict``, writes JSON and, after a restart, loads it into
a fresh policy. Anything the bandit keeps outside ``state_dict`` (free-machine history for the
queue-in-hindsight rule, pending queue decisions, running attempts, replica families) makes the
restored policy drift; here both policies see the second half of a replay and must agree on every
piece of advice and end with the same state.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from plugins.contract.advice import Advice
from plugins.contract.events import Event
from plugins.contract.policy import Policy, PoolView
from simulator.campus.pool import PoolRules
from simulator.campus.replay import build_policy, build_world
from simulator.campus.scenario import generate_campus, load_campus_config
from simulator.trace_model import Trace


@pytest.fixture(scope="module")
def campus() -> Trace:
    config = load_campus_config(None)
    config = replace(config, jobs=replace(config.jobs, replicable_fraction=0.5))
    return generate_campus(config, days=8, scale=0.03, seed=5)


class Twins:
    """Drives the pool with ``original`` and checks that ``restored`` would advise the same."""

    def __init__(self, original: Policy) -> None:
        self.original = original
        self.ASKS_ONLY_WHEN_FREED = original.ASKS_ONLY_WHEN_FREED
        self.restored: Policy | None = None
        self.compared = 0
        self.advised = 0

    def observe(self, event: Event) -> None:
        self.original.observe(event)
        if self.restored is not None:
            self.restored.observe(event)

    def advise(self, view: PoolView, now: float) -> Advice:
        advice = self.original.advise(view, now)
        if self.restored is not None:
            assert self.restored.advise(view, now) == advice, f"advice differs at {now}"
            self.compared += 1
            self.advised += bool(advice.machines or advice.jobs)
        return advice


def snapshot(policy: Policy) -> dict[str, Any]:
    return json.loads(json.dumps(policy.state_dict()))


@pytest.mark.parametrize(
    "name",
    [
        "bandit-computer",
        "bandit-cluster",
        "bandit-cluster-week",
        "bandit-system",
        "replicas-bandit",
    ],
)
def test_a_policy_restored_mid_run_continues_exactly(campus: Trace, name: str) -> None:
    options = {"epsilon": "0.3"}
    original = build_policy(name, campus, options, seed=4)
    twins = Twins(original)
    world = build_world(
        campus,
        twins,
        4,
        PoolRules(),
        60.0,
        twins.observe,
        twins.observe,
    )
    half = (campus.start + campus.end) / 2
    world.engine.run(half)
    saved = snapshot(original)
    restored = build_policy(name, campus, options, seed=99)  # another seed: the rng is restored
    restored.load_state(saved)
    assert snapshot(restored) == saved
    twins.restored = restored
    world.engine.run(campus.end)
    assert twins.compared > 50 and twins.advised > 3
    assert snapshot(restored) == snapshot(original)
