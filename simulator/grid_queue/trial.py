"""One policy on one grid workload, reduced to picklable figures: what an experiment sweeps.

``utility-sarsa`` gets its EDF warm start either off-line, from a separate training workload run
under EDF to its end, or in-run (its first ``warm_decisions`` decisions follow EDF).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from plugins.contract.policy import PolicyContext
from plugins.contract.registry import policy_for
from simulator.grid_queue.run import GridRun, GridSimulation, processors
from simulator.grid_queue.stats import fairness_over_time, waiting_stats
from simulator.grid_queue.workload import GridWorkload

FAIRNESS_POINTS = 300
THIRTEEN_HOURS = 13 * 3600.0


@dataclass(frozen=True)
class Trial:
    """A workload recipe (a module-level builder and its arguments), a policy and its options."""

    build: Callable[..., GridWorkload]
    build_args: dict[str, Any]
    policy: str
    options: dict[str, Any] = field(default_factory=dict)
    train_args: dict[str, Any] | None = None
    """Off-line warm start: build a training workload with these arguments instead."""
    seed: int = 0


@dataclass(frozen=True)
class TrialResult:
    workload: str
    policy: str
    stats: dict[str, dict[str, float]]
    wait: np.ndarray
    runtime: np.ndarray
    submit: np.ndarray
    interactive: np.ndarray
    counted: np.ndarray
    fair_times: np.ndarray
    fairness: np.ndarray
    fair_13h: float
    fair_end: float
    decision_s: np.ndarray


def simulate(workload: GridWorkload, trial: Trial, state: dict[str, Any] | None = None) -> GridRun:
    cls = policy_for(trial.policy, "grid-queue")
    options = {"shares": workload.shares, **trial.options}
    policy = cls(PolicyContext(processors(workload.processors), seed=trial.seed), options)
    if state is not None:
        policy.load_state(state)
    return GridSimulation(workload, policy).run()


def offline_state(trial: Trial) -> dict[str, Any]:
    """SARSA's network after learning from EDF's decisions on the training workload."""
    train = trial.build(**(trial.train_args or {}))
    teacher = Trial(trial.build, {}, trial.policy, {**trial.options, "warm_decisions": len(train)})
    cls = policy_for(trial.policy, "grid-queue")
    options = {"shares": train.shares, **teacher.options}
    policy = cls(PolicyContext(processors(train.processors), seed=trial.seed), options)
    GridSimulation(train, policy).run()
    return policy.state_dict()


def run_trial(trial: Trial) -> TrialResult:
    workload = trial.build(**trial.build_args)
    state = offline_state(trial) if trial.train_args is not None else None
    run = simulate(workload, trial, state)
    counted_end = float(workload.submit[workload.counted][-1])  # before the queue drains
    times = np.linspace(0.0, counted_end, FAIRNESS_POINTS)
    marks = fairness_over_time(run, np.array([THIRTEEN_HOURS, counted_end]))
    return TrialResult(
        workload=workload.name,
        policy=trial.policy,
        stats=waiting_stats(run),
        wait=run.wait,
        runtime=workload.runtime,
        submit=workload.submit,
        interactive=workload.interactive,
        counted=workload.counted,
        fair_times=times,
        fairness=fairness_over_time(run, times),
        fair_13h=float(marks[0]),
        fair_end=float(marks[1]),
        decision_s=run.decision_s,
    )
