"""Tiny hand-made traces for tests, and a policy that records every event it is shown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plugins.contract.advice import Advice
from plugins.contract.events import ALL_EVENT_KINDS, Event
from plugins.contract.policy import Policy, PolicyContext, PoolView
from simulator.campus.replay import ReplayResult, machine_infos, replay
from simulator.trace_model import (
    DAY,
    Cluster,
    Inventory,
    Jobs,
    MachineSpec,
    OpeningHours,
    OwnerSessions,
    Trace,
)

MONDAY = 1262563200.0  # 2010-01-04 00:00 UTC
H = 3600.0
OFFICE = OpeningHours(((9 * H, 17 * H),) * 5 + (None, None))


def inventory(n: int = 1, hours: OpeningHours = OFFICE, active: float = 57.0) -> Inventory:
    return Inventory(
        {"room": Cluster("room", hours)},
        [MachineSpec(f"pc{i}", "room", "normal", 2, active, 40.0, 2.0) for i in range(n)],
    )


def trace(
    inv: Inventory,
    sessions: Sequence[tuple[float, int, float]] = (),
    jobs: Sequence[tuple[float, float, float]] = (),
    days: float = 1.0,
) -> Trace:
    """``sessions``: (login, machine, logout), ``jobs``: (submit, runtime, remove); from MONDAY."""
    s = sorted(sessions)
    owners = OwnerSessions(
        np.array([MONDAY + a for a, _, _ in s], dtype=float),
        np.array([m for _, m, _ in s], dtype=np.int32),
        np.array([MONDAY + b for _, _, b in s], dtype=float),
    )
    j = sorted(jobs)
    job_table = Jobs(
        [f"{i}.0" for i in range(len(j))],
        ["alice"] * len(j),
        np.array([MONDAY + a for a, _, _ in j], dtype=float),
        np.array([r for _, r, _ in j], dtype=float),
        np.array([MONDAY + x for _, _, x in j], dtype=float),
    )
    return Trace(inv, owners, job_table, MONDAY, MONDAY + days * DAY)


class Recorder(Policy):
    """Gives neutral advice and keeps every event, so tests can check what the pool did."""

    NAME = "recorder"
    WANTS = ALL_EVENT_KINDS

    def __init__(self, context: PolicyContext, options: Any = None) -> None:
        super().__init__(context, options)
        self.events: list[Event] = []

    def observe(self, event: Event) -> None:
        self.events.append(event)

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice()


def run_recorded(tr: Trace, seed: int = 0) -> tuple[ReplayResult, list[Event]]:
    policy = Recorder(PolicyContext(machine_infos(tr), seed=seed))
    return replay(tr, policy, seed=seed), policy.events
