"""One day as one episode (paper 001, section 5.2): a power decision every minute for 24 hours.

The same loop serves evaluation (a policy asked with ``advise`` every minute), PPO training and
the Gymnasium wrapper. The reward is eq. 3-5 in units of one idle core for one step, per core of
the cluster.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from plugins.contract.advice import Advice
from plugins.power.view import ClusterView
from simulator.dedicated.cluster import Cluster
from simulator.dedicated.days import DAY_S
from simulator.dedicated.easy import ORDERS, schedule
from simulator.dedicated.power import PowerProfile
from simulator.dedicated.workload import Workload
from simulator.engine import Engine

STEP_S = 60.0


class ClusterPolicy(Protocol):
    """A policy serving the dedicated model: asked with the cluster's view."""

    @property
    def NEEDS_ORACLE(self) -> bool:
        """Read only: a class constant on policies, copied per instance by wrappers."""
        ...

    def advise(self, view: ClusterView, now: float) -> Advice: ...


@dataclass(frozen=True)
class DayMetrics:
    """Section 5.1 for one day."""

    waste_kj: float
    total_kj: float
    cycles_per_node: float
    slowdown: float
    delay_s: float
    stretch: float
    jobs: int
    unstarted: int


class EpisodeOracle:
    """True runtimes for the oracle policy, in the order of the view it was handed."""

    def __init__(self, episode: DayEpisode) -> None:
        self.episode = episode

    def running_end(self) -> np.ndarray:
        c = self.episode.cluster
        run = np.array(c.running, dtype=np.int64)
        return c.record.start[run] + np.minimum(c.jobs.runtime[run], c.jobs.walltime[run])

    def queued_runtime(self) -> np.ndarray:
        q = np.array(self.episode.order, dtype=np.int64)
        jobs = self.episode.jobs
        return np.minimum(jobs.runtime[q], jobs.walltime[q])


class DayEpisode:
    """Simulates one day; ``step(decision)`` applies it and runs the next minute."""

    def __init__(
        self,
        jobs: Workload,
        profile: PowerProfile | None = None,
        order: str = "saf",
        tau: float = 0.5,
        audit: list[tuple[int, float, float]] | None = None,
    ) -> None:
        self.jobs, self.profile, self.tau = jobs, profile or PowerProfile(), tau
        self.key = ORDERS[order]
        self.audit = audit
        self.engine = Engine(0.0)
        self.cluster = Cluster(jobs, self.profile, self.engine, on=False)
        self.order: list[int] = []
        self.promise = math.inf
        self.cluster.on_change.append(self._schedule)
        arrivals = iter(zip(jobs.arrival.tolist(), range(len(jobs)), strict=True))
        self.engine.feed(arrivals, self.cluster.arrive)
        self.steps = 0

    def _schedule(self) -> None:
        self.order, self.promise = schedule(self.cluster, self.key, self.audit)

    @property
    def done(self) -> bool:
        return self.engine.now() >= DAY_S

    def view(self) -> ClusterView:
        return self.cluster.view(self.promise, self.order)

    def step(self, advice: Advice) -> float:
        """Eq. 3: r = -(E_waste + QoS) over this step (eq. 4 and eq. 5 with tau)."""
        meter = self.cluster.meter
        before = meter.waste_j()
        self.cluster.apply(advice)
        self.engine.run(self.engine.now() + STEP_S)
        meter.advance(self.engine.now())
        self.steps += 1
        waste = (meter.waste_j() - before) / (self.profile.idle_w * STEP_S)
        q = np.array(self.order, dtype=np.int64)
        wait = self.engine.now() - self.jobs.arrival[q]
        qos = float(self.jobs.cores[q][wait >= self.jobs.walltime[q] * self.tau].sum())
        return -(waste + qos) / (self.jobs.nodes * self.jobs.cores_per_node)

    def run(self, policy: ClusterPolicy) -> DayMetrics:
        """The whole day under ``policy`` (an oracle policy is handed the true runtimes)."""
        if policy.NEEDS_ORACLE:
            policy.bind_oracle(EpisodeOracle(self))  # type: ignore[attr-defined]
        while not self.done:
            view = self.view()
            self.step(policy.advise(view, view.now))
        return self.metrics()

    def metrics(self, theta: float = 0.5) -> DayMetrics:
        """Waste, cycles, eq. 9, 10 and 2 averaged over the day's jobs (unstarted: wait so far)."""
        jobs, meter = self.jobs, self.cluster.meter
        meter.advance(self.engine.now())
        start = self.cluster.record.start
        started = ~np.isnan(start)
        wait = np.where(started, start, self.engine.now()) - jobs.arrival
        p = np.maximum(jobs.runtime, 1.0)
        over = wait / jobs.walltime >= theta
        return DayMetrics(
            waste_kj=meter.waste_j() / 1e3,
            total_kj=meter.total_j() / 1e3,
            cycles_per_node=self.cluster.switch_offs / jobs.nodes,
            slowdown=float(np.mean((wait + p) / p)),
            delay_s=float(np.mean(np.where(over, wait - jobs.walltime * theta, 0.0))),
            stretch=float(np.mean(wait / jobs.walltime)),
            jobs=len(jobs),
            unstarted=int(np.count_nonzero(~started)),
        )
