"""A dedicated cluster on the project's engine: nodes with cores, power transitions, rigid jobs.

Jobs run on unreserved, powered-on nodes; a job reaching its walltime is killed (its runtime is
capped when the workload is read). The scheduler (``easy.py``) wakes off nodes for the first job;
the power policy switches idle nodes off and holds a reservation of nodes off (section 4.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from plugins.contract.advice import Advice, PowerAdvice
from plugins.power.view import ClusterView, node_number
from simulator.dedicated.power import CoreUse, EnergyMeter, NodeState, PowerProfile
from simulator.dedicated.workload import Workload
from simulator.engine import Engine

GOING_OFF = (PowerAdvice.MAY_SLEEP, PowerAdvice.RESERVE_OFF)
USE_OF_STATE = {
    NodeState.OFF: CoreUse.OFF,
    NodeState.SWITCHING_ON: CoreUse.SWITCHING_ON,
    NodeState.SWITCHING_OFF: CoreUse.SWITCHING_OFF,
}


@dataclass
class JobRecord:
    start: np.ndarray
    placed: dict[int, list[tuple[int, int]]] = field(default_factory=dict)


class Cluster:
    """Node and job state, the energy meter and the counters the metrics need."""

    def __init__(self, jobs: Workload, profile: PowerProfile, engine: Engine, on: bool) -> None:
        self.jobs, self.profile, self.engine = jobs, profile, engine
        n, c = jobs.nodes, jobs.cores_per_node
        self.cores_per_node = c
        first = NodeState.IDLE if on else NodeState.OFF
        self.state = np.full(n, first, dtype=np.int8)
        self.busy = np.zeros(n, dtype=np.int64)
        self.reserved = np.zeros(n, dtype=bool)
        self.idle_since = np.full(n, engine.now())
        self.transition_end = np.zeros(n)
        self.meter = EnergyMeter(profile, engine.now())
        self.meter.move(engine.now(), n * c, None, CoreUse.IDLE if on else CoreUse.OFF)
        self.record = JobRecord(start=np.full(len(jobs), np.nan))
        self.queue: list[int] = []
        self.running: list[int] = []
        self.switch_offs = 0
        self.on_change: list = []

    # --- power state machine -------------------------------------------------------------
    def _set_state(self, node: int, new: NodeState) -> None:
        old = NodeState(int(self.state[node]))
        now = self.engine.now()
        c, busy = self.cores_per_node, int(self.busy[node])
        if old in USE_OF_STATE:
            self.meter.move(now, c, USE_OF_STATE[old], None)
        else:
            self.meter.move(now, busy, CoreUse.COMPUTING, None)
            self.meter.move(now, c - busy, CoreUse.IDLE, None)
        if new in USE_OF_STATE:
            self.meter.move(now, c, None, USE_OF_STATE[new])
        else:
            self.meter.move(now, busy, None, CoreUse.COMPUTING)
            self.meter.move(now, c - busy, None, CoreUse.IDLE)
        self.state[node] = new
        if new == NodeState.IDLE:
            self.idle_since[node] = now

    def switch_off(self, node: int) -> bool:
        """Start switching an idle node off (only a node whose cores are all idle)."""
        if self.state[node] != NodeState.IDLE:
            return False
        self._set_state(node, NodeState.SWITCHING_OFF)
        self.switch_offs += 1
        end = self.engine.now() + self.profile.switch_off_s
        self.transition_end[node] = end
        self.engine.at(end, self._off_done, node)
        return True

    def switch_on(self, node: int) -> None:
        self._set_state(node, NodeState.SWITCHING_ON)
        end = self.engine.now() + self.profile.switch_on_s
        self.transition_end[node] = end
        self.engine.at(end, self._on_done, node)

    def _off_done(self, node: int) -> None:
        self._set_state(node, NodeState.OFF)
        self._changed()

    def _on_done(self, node: int) -> None:
        self._set_state(node, NodeState.IDLE)
        self._changed()

    # --- jobs ----------------------------------------------------------------------------
    def arrive(self, job: int) -> None:
        self.queue.append(job)
        self._changed()

    def start(self, job: int) -> None:
        """Place the job on free cores, filling busy nodes first so whole nodes stay idle."""
        need = int(self.jobs.cores[job])
        free = self.free_cores()
        order = np.lexsort((np.arange(len(free)), -self.busy))
        placed = []
        for node in order:
            if need == 0:
                break
            take = min(need, int(free[node]))
            if take > 0:
                self._set_busy(int(node), take)
                placed.append((int(node), take))
                need -= take
        assert need == 0, "scheduler started a job that does not fit"
        now = self.engine.now()
        self.record.start[job] = now
        self.record.placed[job] = placed
        self.queue.remove(job)
        self.running.append(job)
        self.engine.at(now + self.run_time(job), self._finish, job)

    def run_time(self, job: int) -> float:
        """How long the job holds its cores: its runtime, or its walltime when it is killed."""
        return float(min(self.jobs.runtime[job], self.jobs.walltime[job]))

    def _set_busy(self, node: int, delta: int) -> None:
        now = self.engine.now()
        if delta > 0:
            self.meter.move(now, delta, CoreUse.IDLE, CoreUse.COMPUTING)
        else:
            self.meter.move(now, -delta, CoreUse.COMPUTING, CoreUse.IDLE)
        self.busy[node] += delta
        new = NodeState.COMPUTING if self.busy[node] > 0 else NodeState.IDLE
        if new != self.state[node]:
            self.state[node] = new
            if new == NodeState.IDLE:
                self.idle_since[node] = now

    def _finish(self, job: int) -> None:
        for node, cores in self.record.placed[job]:
            self._set_busy(node, -cores)
        self.running.remove(job)
        self._changed()

    def free_cores(self) -> np.ndarray:
        """Free cores per node that jobs may use now (powered on and not reserved)."""
        usable = (self.state == NodeState.IDLE) | (self.state == NodeState.COMPUTING)
        return np.where(usable & ~self.reserved, self.cores_per_node - self.busy, 0)

    def _changed(self) -> None:
        for callback in self.on_change:
            callback()

    # --- power decisions -----------------------------------------------------------------
    def apply(self, advice: Advice) -> None:
        """A power policy's per-node advice (``plugins.power.base.node_advice``), in its order.

        The cluster has no sleep timer of its own, so a node that may sleep or is reserved off
        is switched off now (an idle, unreserved one; others are left as they are), and the held
        nodes are the reservation from now on (released ones wait for the scheduler to wake them).
        """
        held = np.zeros_like(self.reserved)
        for name, node_advice in advice.machines.items():
            node = node_number(name)
            if node_advice.power in GOING_OFF and not self.reserved[node]:
                self.switch_off(node)
            held[node] = node_advice.hold
        self.reserved[:] = held
        self._changed()

    def view(self, promise: float, order: list[int]) -> ClusterView:
        """The policy's snapshot; ``order`` is the queue in scheduler order."""
        now = self.engine.now()
        q = np.array(order, dtype=np.int64)
        run = np.array(self.running, dtype=np.int64)
        users = self.jobs.user[np.concatenate([q, run])] if len(q) or len(run) else q
        queue_users = self.jobs.user[q]
        same = (queue_users[:, None] == users[None, :]).sum(axis=1) if len(q) else q
        return ClusterView(
            now=now,
            cores_per_node=self.cores_per_node,
            node_state=self.state.copy(),
            reserved=self.reserved.copy(),
            idle_since=self.idle_since.copy(),
            queue_cores=self.jobs.cores[q],
            queue_walltime=self.jobs.walltime[q],
            queue_arrival=self.jobs.arrival[q],
            queue_user_jobs=np.asarray(same),
            running_cores=self.jobs.cores[run],
            running_start=self.record.start[run],
            running_walltime=self.jobs.walltime[run],
            promise=promise,
            switch_on_s=self.profile.switch_on_s,
            ready_at=self.ready_at(),
        )

    def ready_at(self) -> np.ndarray:
        """Per node, when it can next compute if booted as soon as possible (nan: it is on)."""
        out = np.full(len(self.state), np.nan)
        on_s = self.profile.switch_on_s
        now = self.engine.now()
        off = self.state == NodeState.OFF
        out[off] = now + on_s
        booting = self.state == NodeState.SWITCHING_ON
        out[booting] = self.transition_end[booting]
        stopping = self.state == NodeState.SWITCHING_OFF
        out[stopping] = self.transition_end[stopping] + on_s
        return out
