"""Shared part of the power policies: one ``decide`` step, answered through ``advise``.

Each policy's own step is ``decide(ClusterView) -> PowerDecision`` (which idle nodes go off, how
many nodes stay reserved). Every driver asks ``advise(view, now)`` as it asks any policy:

- a dedicated cluster passes its ``ClusterView`` and gets per-node advice (``node_advice``): the
  nodes switched off now ``may-sleep``, the reservation ``reserve-off`` and held;
- a campus replay or the daemon passes a ``PoolView`` and gets ``MachineAdvice.power`` per machine:
  reserved machines are ``reserve-off`` and held, idle ones past their timeout ``may-sleep``,
  sleeping ones ``wake`` when jobs wait and the reservation lets them go.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence

import numpy as np

from plugins.contract.advice import Advice, MachineAdvice, PowerAdvice
from plugins.contract.policy import MachineInfo, MachineView, Policy, PoolView
from plugins.power.view import (
    COMPUTING,
    IDLE,
    OFF,
    SWITCHING_OFF,
    ClusterView,
    PowerDecision,
    RuntimeOracle,
    node_name,
)

LIVE_ADVICE_S = 300.0
"""Advice lifetime in the daemon: a reservation lapses unless renewed (HIBERNATE checks it)."""
RESERVED = MachineAdvice(power=PowerAdvice.RESERVE_OFF, hold=True)
SWITCHED_OFF = MachineAdvice(power=PowerAdvice.MAY_SLEEP)


def idle_nodes_to_keep(view: ClusterView) -> int:
    """Idle nodes the first queued job awaits, kept on while it starts within a boot."""
    if len(view.queue_cores) == 0 or view.promise > view.now + view.switch_on_s:
        return 0
    on = (view.node_state == COMPUTING) & ~view.reserved
    spare = int((view.cores_per_node * on.sum()) - view.running_cores.sum())
    need = max(0, int(view.queue_cores[0]) - spare)
    return math.ceil(need / view.cores_per_node)


def idle_longer_than(view: ClusterView, seconds: float) -> tuple[int, ...]:
    """Unreserved idle nodes idle for at least ``seconds``, minus those the first job awaits."""
    idle = np.flatnonzero((view.node_state == IDLE) & ~view.reserved)
    idle = idle[np.argsort(view.idle_since[idle], kind="stable")]
    keep = idle_nodes_to_keep(view)
    candidates = idle[: max(0, len(idle) - keep)]
    return tuple(int(n) for n in candidates if view.now - view.idle_since[n] >= seconds)


def reservation(view: ClusterView, decision: PowerDecision) -> list[int]:
    """The nodes held for ``decision.reserve``: those held already (lowest numbers first), then
    free nodes that are off, switching off (those switched off by the decision too), idle; so a
    reservation grows by the nodes whose holding costs the least work."""
    target = max(0, int(decision.reserve))
    held = [int(n) for n in np.flatnonzero(view.reserved)]
    if len(held) >= target:
        return held[:target]
    state = view.node_state.copy()
    for n in decision.switch_off:
        if not view.reserved[n] and state[n] == IDLE:
            state[n] = SWITCHING_OFF
    free = ~view.reserved
    for kind in (OFF, SWITCHING_OFF, IDLE):
        held += [int(n) for n in np.flatnonzero(free & (state == kind))[: target - len(held)]]
    return held


def node_advice(view: ClusterView, decision: PowerDecision) -> Advice:
    """``decision`` as per-node advice, in the order a cluster acts on it: the nodes switched
    off (``may-sleep``, or ``reserve-off`` when also held), then the other held nodes in number
    order (``reserve-off``). A node not named stays as it is (``on``)."""
    held = reservation(view, decision)
    kept = set(held)
    advice = Advice()
    machines = advice.machines
    for n in (*decision.switch_off, *sorted(held)):
        name = node_name(n)
        if name not in machines:
            machines[name] = RESERVED if n in kept else SWITCHED_OFF
    return advice


class PowerPolicy(Policy):
    """A policy deciding node power for a dedicated cluster, usable by simulator and daemon."""

    SERVES = frozenset({"campus", "dedicated"})
    most_at_once = 0
    """The most one-core jobs one machine runs at once; 0 until counted (``_most_at_once``)."""

    def machines_joined(self, machines: Sequence[MachineInfo]) -> None:
        self.most_at_once = 0  # counted again at the next advice

    def _most_at_once(self) -> int:
        """Counted once per change of the pool, not each minute (a year has 525,600 ticks)."""
        if not self.most_at_once:
            found = (m.jobs_at_once for m in self.context.machines.values())
            self.most_at_once = max(found, default=1)
        return self.most_at_once

    def bind_oracle(self, oracle: RuntimeOracle) -> None:
        raise RuntimeError(f"{self.NAME} reads no future runtimes")

    @abstractmethod
    def decide(self, view: ClusterView) -> PowerDecision:
        """Which idle nodes to switch off and how many nodes to keep reserved and off."""

    def advise(self, view: PoolView | ClusterView, now: float) -> Advice:
        """Per-node advice for a dedicated cluster, per-machine power advice for a pool."""
        if isinstance(view, ClusterView):
            return node_advice(view, self.decide(view))
        cluster = pool_as_cluster(view, now)
        decision = self.decide(cluster)
        sleeping = [i for i, m in enumerate(view.machines) if m.state != "idle"]
        awake = [i for i, m in enumerate(view.machines) if m.state == "idle"]
        can_sleep = [i for i in awake if view.machines[i].can_sleep]  # (the others stay ready)
        reserved = set((sleeping + can_sleep)[: max(0, decision.reserve)])
        switched_off = {i for i in decision.switch_off if view.machines[i].can_sleep}
        ready = [i for i in awake if i not in reserved and i not in switched_off]
        # wake only the sleeping machines the waiting jobs need beyond what the awake free take
        taken = sum(self._jobs_taken(view.machines[i]) for i in ready)
        wanted = view.one_core_jobs(self._most_at_once()) - taken
        wake = []
        for i in sleeping:
            if wanted <= 0:
                break
            if i not in reserved:
                wake.append(i)
                wanted -= self._jobs_taken(view.machines[i])
        power = [PowerAdvice.ON] * len(view.machines)
        for indices, state in (
            (wake, PowerAdvice.WAKE),
            (switched_off, PowerAdvice.MAY_SLEEP),
            (reserved, PowerAdvice.RESERVE_OFF),
        ):
            for i in indices:
                power[i] = state
        expires = now + LIVE_ADVICE_S  # one advice per state: a pool's machines share them
        said = {
            p: MachineAdvice(power=p, hold=p == PowerAdvice.RESERVE_OFF, expires=expires)
            for p in PowerAdvice
        }
        return Advice(machines={m.name: said[p] for m, p in zip(view.machines, power, strict=True)})

    def _jobs_taken(self, machine: MachineView) -> int:
        """One-core jobs the free machine takes now: as many as its free cores, up to the jobs
        it runs at once (one on a single slot; docs/slots.md)."""
        info = self.context.machines.get(machine.name)
        return min(info.jobs_at_once if info else 1, machine.free_cores)


def pool_as_cluster(view: PoolView, now: float) -> ClusterView:
    """The daemon's pool as a one-core-per-machine cluster (queue: one core per idle job)."""
    state = np.array([IDLE if m.state == "idle" else OFF for m in view.machines], dtype=np.int8)
    waiting = int(sum(view.idle_jobs_by_prior_hours))
    hours = np.repeat(
        np.arange(len(view.idle_jobs_by_prior_hours)), view.idle_jobs_by_prior_hours
    ).astype(float)
    empty = np.zeros(0)
    return ClusterView(
        now=now,
        cores_per_node=1,
        node_state=state,
        reserved=np.zeros(len(state), dtype=bool),
        idle_since=np.array([m.free_since for m in view.machines], dtype=float),
        queue_cores=np.ones(waiting, dtype=np.int64),
        queue_walltime=np.maximum(hours, 1.0) * 3600.0,
        queue_arrival=np.full(waiting, now),
        queue_user_jobs=np.ones(waiting, dtype=np.int64),
        running_cores=empty.astype(np.int64),
        running_start=empty,
        running_walltime=empty,
        promise=now if waiting else math.inf,
        switch_on_s=60.0,
        ready_at=np.where(state == OFF, now + 60.0, np.nan),
    )
