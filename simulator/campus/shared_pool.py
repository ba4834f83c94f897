"""A campus pool whose machines may be partitionable (docs/slots.md): such a machine takes jobs
while their requested cores and memory fit, as one HTCondor partitionable slot carves a dynamic
slot per job. An owner's login, the nightly reboot or a failure ends every job on the machine at
once; it may sleep (on its timers or "reserve-off" advice) only once no job is left.

A machine's power is linear in its busy cores between its idle and active draw (the server model
of Fan, Weber and Barroso 2007, eq. 1: P(u) = P_idle + (P_busy - P_idle) u). Each attempt is
charged its cores' share of that power: the pool integrates, per machine, the watts per busy core
over time, and an attempt pays its cores times the integral's growth while it ran. A ``single``
machine's one job holds all its cores, so it pays the machine's active draw, as in the papers.
"""

from __future__ import annotations

from collections.abc import Callable

from plugins.contract.events import (
    ALL_EVENT_KINDS,
    ALL_POWER_STATES,
    AttemptOutcome,
    Event,
    PowerState,
)
from simulator.campus.pool import HTC, IDLE, AttemptListener, CampusPool
from simulator.campus.rules import PoolRules
from simulator.engine import Engine
from simulator.trace_model import PARTITIONABLE, Inventory


class SharedPool(CampusPool):
    """Machines that run several jobs at once; ``cpus`` and ``memory`` are the jobs' requests by
    entry (the job book's own lists, which grow with replicas)."""

    def __init__(
        self,
        engine: Engine,
        inventory: Inventory,
        rules: PoolRules,
        listener: AttemptListener,
        emit: Callable[[Event], None] | None,
        cpus: list[int],
        memory: list[float],
        wants: frozenset[type] = ALL_EVENT_KINDS,
        power_states: frozenset[PowerState] = ALL_POWER_STATES,
    ) -> None:
        self.cpus, self.memory = cpus, memory
        machines = inventory.machines
        self.shared = [m.slots == PARTITIONABLE for m in machines]
        self.running: list[list[int]] = [[] for _ in machines]
        self.busy_cores = [0] * len(machines)
        self.per_core = [0.0] * len(machines)
        """Per machine, watt-seconds per busy core so far (what a one-core attempt pays)."""
        self.htc_joules = [0.0] * len(machines)
        self.core_seconds = [0.0] * len(machines)
        self.marked = [engine.now()] * len(machines)
        self.mark: dict[int, float] = {}
        """Per running entry, its machine's ``per_core`` when it started."""
        super().__init__(engine, inventory, rules, listener, emit, wants, power_states)

    def uses(self, j: int, m: int) -> tuple[int, float]:
        """Cores and memory entry ``j`` takes on ``m`` (a single machine: all of it)."""
        if self.shared[m]:
            return self.cpus[j], self.memory[j]
        return self.cores[m], 0.0

    def fits(self, j: int, m: int) -> bool:
        cores, memory = self.uses(j, m)
        return cores <= self.free_cores[m] and memory <= self.free_memory[m]

    def has_room(self, m: int) -> bool:
        return self.free_cores[m] > 0 and self.free_memory[m] > 0

    def _account(self, m: int, now: float) -> None:
        """Bring the machine's energy integrals up to ``now`` at its current busy cores."""
        busy, elapsed = self.busy_cores[m], now - self.marked[m]
        if busy and elapsed > 0:
            _, idle, active, _, _ = self.watts[m]
            watts = idle + (active - idle) * busy / self.cores[m]
            self.htc_joules[m] += watts * elapsed
            self.core_seconds[m] += busy * elapsed
            self.per_core[m] += watts / busy * elapsed
        self.marked[m] = now

    def attempt_wh(self, j: int, m: int) -> float:
        """Energy of entry ``j``'s attempt on ``m`` so far: its cores' share of the machine."""
        self._account(m, self.engine.time)
        return self.uses(j, m)[0] * (self.per_core[m] - self.mark[j]) / 3600.0

    def _enter(self, m: int, state: int, now: float) -> None:
        super()._enter(m, state, now)
        if state > IDLE:  # taken by a job, its owner or a failure: no longer offered
            self.free_awake.discard(m)

    def start_job(self, m: int, job: int) -> None:
        """Carve a dynamic slot: the first job wakes the machine and makes it busy; while room
        is left the machine stays offered, as its partitionable slot stays Unclaimed."""
        now = self.engine.time
        self._account(m, now)
        if not self.running[m]:
            super().start_job(m, job)
        cores, memory = self.uses(job, m)
        self.running[m].append(job)
        self.busy_cores[m] += cores
        self.free_cores[m] -= cores
        self.free_memory[m] -= memory
        self.mark[job] = self.per_core[m]
        if self.has_room(m):
            self.free_awake.add(m)
        else:  # full: its partitionable slot is Claimed until a job ends
            self.free_awake.discard(m)

    def _end(self, m: int, j: int, outcome: AttemptOutcome) -> None:
        """One attempt ends: the listener charges it, then its cores and memory return."""
        self._account(m, self.engine.time)
        self.listener.attempt_ended(j, m, outcome)
        cores, memory = self.uses(j, m)
        self.running[m].remove(j)
        self.busy_cores[m] -= cores
        self.free_cores[m] += cores
        self.free_memory[m] += memory
        del self.mark[j]
        self.job[m] = self.running[m][0] if self.running[m] else -1

    def _stop_job(self, m: int, outcome: AttemptOutcome) -> None:
        """An owner, the reboot or a failure ends every job on the machine."""
        for j in list(self.running[m]):
            self._end(m, j, outcome)

    def finish_job(self, m: int, j: int, outcome: AttemptOutcome) -> None:
        """Entry ``j`` completed or was removed: idle once no job is left, else offered again
        with the room it freed."""
        self._end(m, j, outcome)
        if not self.running[m]:
            self._become_idle(m, self.engine.time)
        elif self.state[m] == HTC:
            self.free_awake.add(m)
            self._changed(m)
            self.listener.machine_freed()

    def close(self) -> None:
        now = self.engine.time
        for m in range(len(self.state)):
            self._account(m, now)
        super().close()

    def energy_by_state_wh(self) -> dict[str, float]:
        """As a single pool's, with busy machines at their draw for the cores they had busy."""
        energy = super().energy_by_state_wh()
        energy["htc"] = sum(self.htc_joules) / 3600.0
        return energy

    def core_seconds_held(self) -> float:
        return sum(self.core_seconds)
