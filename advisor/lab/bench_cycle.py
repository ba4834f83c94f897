"""A synthetic pool of N single-slot machines for timing one observe-decide-publish cycle.

Worst case on purpose: every cycle brings a minute's worth of events and every machine is a
candidate, so the policy re-advises the whole pool and the board republishes all of it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from advisor.daemon.board import hook_lines
from advisor.daemon.config import check_config
from advisor.daemon.runtime import Daemon, make_policy
from advisor.ports import Observation
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    OwnerSessionEnded,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineInfo, MachineView, PoolView


class SyntheticPool:
    """A ``PoolSource`` over ``n`` machines with ``events`` random events per poll."""

    def __init__(self, n: int, events: int, seed: int = 1) -> None:
        self.names = [f"slot{i:05d}.example.org" for i in range(n)]
        self.machines = {
            name: MachineInfo(name, f"room{i % 37}", "normal", 57.0, 40.0, 2.0)
            for i, name in enumerate(self.names)
        }
        self.rng = np.random.default_rng(seed)
        self.events = events
        self.polls = 0

    def poll(self, now: float) -> Observation:
        self.polls += 1
        picks = self.rng.integers(0, len(self.names), self.events)
        events: list[Event] = []
        for i, m in enumerate(picks.tolist()):
            name, job, t = self.names[m], f"{self.polls}.{i}", now - 60 + i * 60 / self.events
            kind = i % 5
            if kind == 0:
                events.append(OwnerSessionStarted(t, name))
            elif kind == 1:
                events.append(OwnerSessionEnded(t, name))
            elif kind == 2:
                events.append(JobQueued(t, job, "alice"))
            elif kind == 3:
                events.append(AttemptStarted(t, job, name))
            else:
                outcome = AttemptOutcome.COMPLETED if m % 3 else AttemptOutcome.EVICTED_OWNER
                events.append(AttemptEnded(t, job, name, outcome, t - 3600, 57.0))
        view = PoolView([MachineView(n, "idle", now - 600) for n in self.names], [5] * 24)
        return Observation(events, view, self.machines)

    def cursor(self) -> dict[str, Any]:
        return {"polls": self.polls}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        self.polls = int(cursor["polls"])


def bench_cycles(
    slots: int, events: int, cycles: int, policy: str, options: dict[str, str], state_dir: str
) -> dict[str, float]:
    """CPU seconds per cycle (mean and max), plus serving every machine's hook lines once."""
    config = check_config(
        {
            "pool": {"kind": "condor", "collector": "bench:9618"},
            "policy": {"name": policy, "options": options},
            "state": {"directory": state_dir},
        }
    )
    pool = SyntheticPool(slots, events)
    clock = [1.7e9]
    daemon = Daemon(config, make_policy(config, pool.machines), pool, [], lambda: clock[0])
    cpu = []
    for _ in range(cycles):
        clock[0] += 60.0
        began = time.process_time()
        daemon.host.cycle(clock[0])
        cpu.append(time.process_time() - began)
    began = time.process_time()
    served = sum(len(hook_lines(daemon.board.get(n, clock[0]))) for n in pool.names)
    serve_cpu = time.process_time() - began
    began = time.process_time()
    daemon.snapshot(clock[0])
    snapshot_cpu = time.process_time() - began
    return {
        "cycle_cpu_s_mean": float(np.mean(cpu)),
        "cycle_cpu_s_max": float(np.max(cpu)),
        "hook_all_machines_cpu_s": serve_cpu,
        "hook_bytes": float(served),
        "snapshot_cpu_s": snapshot_cpu,
    }
