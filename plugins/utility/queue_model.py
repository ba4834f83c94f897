"""The queue as a policy sees it from events: waiting jobs as columns, running jobs, service per
group. It yields the five state variables of paper 002, sec. III-B."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from plugins.contract.events import AttemptEnded, AttemptStarted, Event, JobQueued, JobRemoved
from plugins.utility.functions import INTERACTIVE_LIMIT_S


@dataclass(slots=True)
class RunningJob:
    start: float
    runtime: float
    group: str
    utility: float


class WaitingColumns:
    """Waiting jobs as numpy columns with O(1) swap-removal, so scoring them is vectorised."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.users: list[str] = []
        self.groups: list[str] = []
        self.arrival = np.empty(64)
        self.runtime = np.empty(64)
        self.group_index = np.empty(64, dtype=np.int64)
        self.seq = np.empty(64, dtype=np.int64)
        """Arrival order, so ties in arrival time still leave in arrival order."""
        self._row: dict[str, int] = {}
        self._next_seq = 0

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._row

    def add(self, job_id: str, user: str, group: str, gi: int, arrival: float, rt: float) -> None:
        n = len(self.ids)
        if n == len(self.arrival):
            self.arrival = np.resize(self.arrival, 2 * n)
            self.runtime = np.resize(self.runtime, 2 * n)
            self.group_index = np.resize(self.group_index, 2 * n)
            self.seq = np.resize(self.seq, 2 * n)
        self._row[job_id] = n
        self.ids.append(job_id)
        self.users.append(user)
        self.groups.append(group)
        self.arrival[n], self.runtime[n], self.group_index[n] = arrival, rt, gi
        self.seq[n] = self._next_seq
        self._next_seq += 1

    def pop(self, job_id: str) -> tuple[float, float, str]:
        """Remove a job (the last row moves into its place); returns arrival, runtime, group."""
        i = self._row.pop(job_id)
        found = (float(self.arrival[i]), float(self.runtime[i]), self.groups[i])
        last = len(self.ids) - 1
        if i != last:
            moved = self.ids[last]
            self._row[moved] = i
            self.ids[i], self.users[i], self.groups[i] = moved, self.users[last], self.groups[last]
            self.arrival[i], self.runtime[i] = self.arrival[last], self.runtime[last]
            self.group_index[i], self.seq[i] = self.group_index[last], self.seq[last]
        self.ids.pop()
        self.users.pop()
        self.groups.pop()
        return found

    def row(self, job_id: str) -> int:
        return self._row[job_id]


class QueueModel:
    """Follows JobQueued / AttemptStarted / AttemptEnded / JobRemoved; groups outside ``groups``
    get index -1."""

    def __init__(self, groups: Sequence[str], processors: int, default_runtime_s: float) -> None:
        self.groups = tuple(groups)
        self.group_index = {g: i for i, g in enumerate(self.groups)}
        self.processors = processors
        self.default_runtime_s = default_runtime_s
        self.waiting = WaitingColumns()
        self.running: dict[str, RunningJob] = {}
        self.service: dict[str, float] = {}

    def observe(self, event: Event, utility_at_start: float = 1.0) -> None:
        if isinstance(event, JobQueued):
            rt = event.expected_runtime_s
            runtime = self.default_runtime_s if rt is None else rt
            gi = self.group_index.get(event.group, -1)
            self.waiting.add(event.job_id, event.user, event.group, gi, event.time, runtime)
        elif isinstance(event, AttemptStarted) and event.job_id in self.waiting:
            _, runtime, group = self.waiting.pop(event.job_id)
            self.running[event.job_id] = RunningJob(event.time, runtime, group, utility_at_start)
        elif isinstance(event, JobRemoved) and event.job_id in self.waiting:
            self.waiting.pop(event.job_id)  # (kept, it would head a FIFO order for ever)
        elif isinstance(event, AttemptEnded):
            job = self.running.pop(event.job_id, None)
            if job is not None:
                used = max(event.time - job.start, 0.0)
                self.service[job.group] = self.service.get(job.group, 0.0) + used

    def received(self, now: float) -> dict[str, float]:
        """S_k(now): each group's fraction of all service so far, running jobs included."""
        service = dict(self.service)
        for job in self.running.values():
            service[job.group] = service.get(job.group, 0.0) + max(now - job.start, 0.0)
        total = sum(service.values())
        return {g: (v / total if total > 0 else 0.0) for g, v in service.items()}

    def state(self, now: float) -> np.ndarray:
        """Paper 002, sec. III-B: time until the next completion, idle processors, waiting work,
        mean expected utility of the running jobs, and the share received by each group."""
        running = self.running.values()
        next_end = min((j.start + j.runtime for j in running), default=now)
        mean_utility = float(np.mean([j.utility for j in running])) if self.running else 1.0
        received = self.received(now)
        waiting_work = float(self.waiting.runtime[: len(self.waiting)].sum())
        head = [
            max(next_end - now, 0.0),
            float(max(self.processors - len(self.running), 0)),
            waiting_work,
            mean_utility,
        ]
        return np.array(head + [received.get(g, 0.0) for g in self.groups])

    def interactive(self) -> np.ndarray:
        return self.waiting.runtime[: len(self.waiting)] < INTERACTIVE_LIMIT_S
