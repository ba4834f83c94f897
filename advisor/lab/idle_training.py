"""Idle-time models fitted on a trace's owner history up to a month, and stored: ``train-idle``,
and the idle experiments' warm starts, give a policy the history a replay would have shown it."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from advisor.lab.model_store import save_models
from plugins.idle.history import history_from_sessions
from simulator.sources import SourceError, SourceSpec, assemble
from simulator.trace_model import Jobs, Trace
from simulator.traces import read_inventory, read_owner_sessions

if TYPE_CHECKING:
    from plugins.idle.policy import IdlePolicy


@dataclass(frozen=True)
class IdleTraining:
    """What ``train_and_store`` fitted, and what it cost."""

    pairs: int
    samples: int
    wall_s: float
    cpu_s: float
    """In this process and its workers."""
    prediction_us: float
    """Mean wall time of one ``predict`` (features, RF and MLP)."""


def owner_trace(spec: SourceSpec) -> Trace:
    """Owner sessions only: a scenario, or ``machines`` with ``owners`` (no jobs needed)."""
    if spec.scenario is not None:
        trace, _ = assemble(spec)
        return trace
    if spec.machines is None or spec.owners is None:
        raise SourceError("train-idle needs --scenario campus, or --machines F with --owners F")
    inventory = read_inventory(spec.machines)
    owners = read_owner_sessions(spec.owners, inventory)
    start = float(owners.login.min()) if len(owners) else 0.0
    empty = Jobs([], [], *(np.empty(0),) * 3)
    return Trace(inventory, owners, empty, start, float(owners.logout.max(initial=start)))


def load_history(policy: IdlePolicy, trace: Trace, until: float) -> None:
    """Give the policy the owner history a replay up to ``until`` would have shown it."""
    owners = trace.owners
    for i, machine in enumerate(trace.inventory.machines):
        mine = owners.machine == i
        policy.histories[machine.name] = history_from_sessions(
            owners.login[mine], owners.logout[mine], trace.start, until, policy.context.reboot_hour
        )


def train_and_store(policy: IdlePolicy, trace: Trace, until: float, out: Path) -> IdleTraining:
    """Fit ``policy``'s models on the history before ``until``; save them in the store ``out``."""
    load_history(policy, trace, until)
    began, cpu = time.perf_counter(), _cpu_s()
    policy.retrain(until)
    took, cpu = time.perf_counter() - began, _cpu_s() - cpu
    trainer = policy.trainer
    save_models(
        out,
        policy.models,
        window=(trace.start, until),
        features=trainer.feature_names,
        options=policy.options,
        scores=trainer.state_dict(),
        reboot_hour=policy.context.reboot_hour,
    )
    samples = sum(p.samples for p in policy.models.values())
    return IdleTraining(len(policy.models), samples, took, cpu, _prediction_us(policy, until))


def _cpu_s() -> float:
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _prediction_us(policy: IdlePolicy, now: float) -> float:
    """Mean wall time of ``predict`` over every machine with a model (a benchmark figure)."""
    names = [n for n in policy.histories if policy.trainer.layout.group_of[n] in policy.models]
    if not names:
        return float("nan")
    began = time.perf_counter()
    for name in names:
        policy.predict(name, now, now)
    return (time.perf_counter() - began) / len(names) * 1e6
