"""Greedy allocation on the project's engine: whenever a processor frees and jobs wait, the policy's
advice picks one (the highest ``prio``); the policy sees the same events as in a live pool."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, JobQueued
from plugins.contract.policy import MachineInfo, MachineView, Policy, PoolView
from simulator.engine import Engine
from simulator.grid_queue.workload import GridWorkload


def processors(n: int) -> dict[str, MachineInfo]:
    """The P identical processors, as the policy context's inventory."""
    return {
        f"cpu{i:03d}": MachineInfo(f"cpu{i:03d}", "grid", "cpu", 0.0, 0.0, 0.0) for i in range(n)
    }


@dataclass(frozen=True)
class GridRun:
    """Start time of every job; per decision the wall time of ``advise`` and the queue length."""

    workload: GridWorkload
    policy: str
    start: np.ndarray
    decision_s: np.ndarray
    queue_length: np.ndarray

    @property
    def wait(self) -> np.ndarray:
        return self.start - self.workload.submit


class GridSimulation:
    """One run of a workload under one policy; ``run()`` returns the ``GridRun``."""

    def __init__(self, workload: GridWorkload, policy: Policy) -> None:
        self.w = workload
        self.policy = policy
        self.engine = Engine(0.0)
        self.free = sorted(processors(workload.processors), reverse=True)
        self.free_since = dict.fromkeys(self.free, 0.0)
        self.machine_of: dict[int, str] = {}
        self.waiting: dict[str, int] = {}
        self.start = np.full(len(workload), np.nan)
        self.decision_s: list[float] = []
        self.queue_length: list[int] = []

    def run(
        self, on_advance: Callable[[float], None] | None = None, until: float = np.inf
    ) -> GridRun:
        """Simulate to the end (or to ``until``, leaving the queue as it is then)."""
        w = self.w
        self.engine.feed(((float(t), j) for j, t in enumerate(w.submit)), self.arrive)
        self.engine.run(until, on_advance)
        decisions = np.array(self.decision_s)
        return GridRun(w, self.policy.label, self.start, decisions, np.array(self.queue_length))

    def arrive(self, j: int) -> None:
        now = self.engine.now()
        job_id = str(j)
        self.waiting[job_id] = j
        event = JobQueued(
            now, job_id, self.w.user_of(j), group=self.w.group[j],
            expected_runtime_s=float(self.w.runtime[j]),
        )  # fmt: skip
        self.policy.observe(event)
        self.dispatch(now)

    def finish(self, j: int) -> None:
        now = self.engine.now()
        machine = self.machine_of.pop(j)
        ended = AttemptEnded(now, str(j), machine, AttemptOutcome.COMPLETED, float(self.start[j]))
        self.policy.observe(ended)
        self.free.append(machine)
        self.free_since[machine] = now
        self.dispatch(now)

    def view(self) -> PoolView:
        """What the policy sees: the free processors and the queue length."""
        return PoolView(
            machines=[MachineView(m, "idle", self.free_since[m]) for m in self.free],
            idle_jobs_by_prior_hours=(len(self.waiting),),
        )

    def dispatch(self, now: float) -> None:
        """Greedy allocation: one advised job per free processor while jobs wait."""
        while self.free and self.waiting:
            view = self.view()
            began = time.perf_counter()
            advice = self.policy.advise(view, now)
            self.decision_s.append(time.perf_counter() - began)
            self.queue_length.append(len(self.waiting))
            jobs = advice.jobs
            job_id = max(
                self.waiting,
                key=lambda k: (jobs[k].prio if k in jobs else -np.inf, -self.waiting[k]),
            )
            j = self.waiting.pop(job_id)
            machine = self.free.pop()
            self.machine_of[j] = machine
            self.start[j] = now
            self.policy.observe(AttemptStarted(now, job_id, machine))
            self.engine.at(now + float(self.w.runtime[j]), self.finish, j)
