"""The multi-use ("campus") pool of docs/architecture.md section 4: machines that are asleep,
idle, used by their owner, running an HTC job, or down; with sleep timers, the job-start delay
after an owner leaves, the nightly 03:00 reboot, and energy accounted per state and machine.

Machine state lives in parallel lists indexed by machine number: a year has millions of
transitions and attribute lookups on lists are the cheapest Python offers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from plugins.contract.advice import WOKEN_UP_S
from plugins.contract.events import (
    ALL_EVENT_KINDS,
    ALL_POWER_STATES,
    AttemptOutcome,
    Event,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)
from simulator.campus.rules import PoolRules
from simulator.engine import Engine
from simulator.indexed_set import IndexedSet
from simulator.trace_model import DAY, ClosingTimes, Inventory, OwnerSessions

SLEEP, IDLE, OWNER, HTC, DOWN = range(5)
STATE_NAMES = ("sleep", "idle", "owner", "htc", "down")
# enum members as module constants: ``PowerState.ON`` is a slow class getattr (millions a year)
POWER_ON, POWER_SLEEP, POWER_OFF = PowerState.ON, PowerState.SLEEP, PowerState.OFF
EVICTED_OWNER, EVICTED_REBOOT = AttemptOutcome.EVICTED_OWNER, AttemptOutcome.EVICTED_REBOOT


class AttemptListener(Protocol):
    def attempt_ended(self, job: int, machine: int, outcome: AttemptOutcome) -> None: ...

    def machine_freed(self) -> None: ...


class CampusPool:
    """Machine states and transitions; tells the listener about ended attempts."""

    def __init__(
        self,
        engine: Engine,
        inventory: Inventory,
        rules: PoolRules,
        listener: AttemptListener,
        emit: Callable[[Event], None] | None,
        wants: frozenset[type] = ALL_EVENT_KINDS,
        power_states: frozenset[PowerState] = ALL_POWER_STATES,
    ) -> None:
        self.engine = engine
        self._at = engine.at
        self.rules = rules
        self.listener = listener
        self.emit = emit or (lambda event: None)
        """Receives the machine events in ``wants``; the others are never built (millions)."""
        self.emits_login = emit is not None and OwnerSessionStarted in wants
        self.emits_logout = emit is not None and OwnerSessionEnded in wants
        self.power_states = power_states if emit and MachinePowerChanged in wants else frozenset()
        self.names = [m.name for m in inventory.machines]
        self.index = inventory.index()
        rooms = {name: ClosingTimes(c.hours) for name, c in inventory.clusters.items()}
        self.next_closing = [rooms[m.cluster].next_closing for m in inventory.machines]
        """Per machine, its room's ``next_closing(t)`` (memoised, shared by the room's PCs)."""
        self.watts = [
            (m.sleep_watts, m.idle_watts, m.active_watts, m.active_watts, 0.0)
            for m in inventory.machines
        ]
        self.cores = [m.cores for m in inventory.machines]
        self.free_cores = list(self.cores)
        self.free_memory = [m.memory_mb for m in inventory.machines]
        """What a job may still take on each machine (all of it when free: docs/slots.md)."""
        n = len(self.names)
        start = engine.now()
        self.state = [IDLE] * n
        self.since = [start] * n
        self.seconds = [[0.0] * 5 for _ in range(n)]
        self.version = [0] * n
        self.owners = [0] * n
        self.down = [0] * n
        self.free_since = [start] * n
        self.woken_at = [-DAY] * n
        self.job = [-1] * n
        self.free_awake = IndexedSet()
        self.sleeping = IndexedSet()
        self.changed: set[int] = set()
        """Machines that became free or fell asleep since the negotiator last looked."""
        self.freed: set[int] = set()
        """Of those, the machines that were not free before (taken by an owner, a job, down)."""
        self._taken = [True] * n
        """Per machine: not free since an owner, a job or a failure last took it."""
        self._session_machine: list[int] = []
        """Per owner session in the order the replay delivers it, its machine."""
        for m in range(n):
            self._become_idle(m, start)

    # -- transitions -------------------------------------------------------------------------
    def _enter(self, m: int, state: int, now: float) -> None:
        old = self.state[m]
        self.seconds[m][old] += now - self.since[m]
        self.state[m] = state
        self.since[m] = now
        self.version[m] += 1
        if state > IDLE:  # OWNER, HTC or DOWN
            self._taken[m] = True
        if old == IDLE:
            self.free_awake.discard(m)
        elif old == SLEEP:
            self.sleeping.discard(m)

    def _become_idle(self, m: int, now: float, delay_job: bool = False) -> None:
        """Idle: schedule sleep, and make the machine matchable (after the owner delay)."""
        self._enter(m, IDLE, now)
        rules, next_closing, at = self.rules, self.next_closing[m], self._at
        version = self.version[m]
        eligible = now
        # ``b if b < a else a`` is ``min(a, b)`` without a builtin call (100,000s a month)
        if delay_job:
            closing = next_closing(now)
            if closing > now:  # open: wait for the job-start delay, or for closing time
                eligible = now + rules.job_delay_open_s
                eligible = closing if closing < eligible else eligible
        # asleep after the open-room timeout, or the closed-room one once the room has closed
        # (``next_closing(t)`` is never before t)
        sleep_at, closed = now + rules.sleep_open_s, next_closing(now + rules.sleep_closed_s)
        sleep_at = closed if closed < sleep_at else sleep_at
        at(sleep_at, self._sleep_timer, (m, version))
        if eligible <= now:
            self._free(m)
        else:
            at(eligible, self._eligible_timer, (m, version))

    def _eligible_timer(self, arg: tuple[int, int]) -> None:
        m, version = arg
        if self.version[m] == version and self.state[m] == IDLE:
            self._free(m)

    def _free(self, m: int) -> None:
        self.free_awake.add(m)
        self._changed(m)
        self.listener.machine_freed()

    def _changed(self, m: int) -> None:
        """The machine is a candidate for jobs in a new way (free, asleep, awake again)."""
        self.changed.add(m)
        if self._taken[m]:
            self._taken[m] = False
            self.freed.add(m)

    def _sleep_timer(self, arg: tuple[int, int]) -> None:
        """Idle since ``version`` still: asleep now (the IDLE -> SLEEP step of ``_enter``)."""
        m, version = arg
        if self.version[m] != version:
            return
        now = self.engine.time
        self.seconds[m][IDLE] += now - self.since[m]
        self.state[m], self.since[m], self.version[m] = SLEEP, now, version + 1
        self.free_awake.discard(m)
        self.sleeping.add(m)
        self._changed(m)
        if POWER_SLEEP in self.power_states:
            self._power(m, POWER_SLEEP)

    def sleep_now(self, m: int) -> None:
        """An idle machine goes to sleep ("reserve-off" advice: HIBERNATE), unless it was woken
        within the hour (``WOKEN_UP_S``)."""
        if self.state[m] == IDLE and self.engine.time - self.woken_at[m] >= WOKEN_UP_S:
            self._sleep_timer((m, self.version[m]))

    def wake(self, m: int) -> None:
        """condor_rooster wakes a sleeping machine ("wake" advice): awake, idle and free."""
        if self.state[m] == SLEEP:
            self._wake_up(m)
            self._become_idle(m, self.engine.time)

    def _wake_up(self, m: int) -> None:
        """Out of sleep by rooster, an owner or wake-on-LAN (not a reboot): up for the hour."""
        self._power(m, POWER_ON)
        self.woken_at[m] = self.engine.time

    def _power(self, m: int, state: PowerState) -> None:
        if state in self.power_states:
            self.emit(MachinePowerChanged(self.engine.time, self.names[m], state))

    def _stop_job(self, m: int, outcome: AttemptOutcome) -> None:
        job = self.job[m]
        if job >= 0:
            self.listener.attempt_ended(job, m, outcome)
            self.job[m] = -1

    # -- trace inputs ------------------------------------------------------------------------
    def plan_sessions(self, sessions: OwnerSessions) -> list[float]:
        """Learn the trace's owner sessions; returns their login times in the order the replay
        delivers them: ``owner_login(s)`` starts the ``s``-th."""
        delivered = np.argsort(sessions.login, kind="stable")
        self._session_machine = sessions.machine[delivered].tolist()
        return sessions.login[delivered].tolist()

    def owner_login(self, s: int) -> None:
        """The ``s``-th planned session begins."""
        now = self.engine.time
        m = self._session_machine[s]
        self.owners[m] += 1
        if self.emits_login:
            self.emit(OwnerSessionStarted(now, self.names[m]))
        if self.state[m] == OWNER or self.down[m]:
            return
        if self.job[m] >= 0:
            self._stop_job(m, EVICTED_OWNER)
        if self.state[m] == SLEEP:
            self._wake_up(m)
        self._enter(m, OWNER, now)

    def owner_logout(self, m: int) -> None:
        now = self.engine.time
        if self.owners[m]:  # a logout without its login (trace edge) leaves no one
            self.owners[m] -= 1
        if self.emits_logout:
            self.emit(OwnerSessionEnded(now, self.names[m]))
        if self.owners[m] or self.down[m] or self.state[m] != OWNER:
            return
        self.free_since[m] = now
        self._become_idle(m, now, delay_job=True)

    def reboot_all(self, _: object = None) -> None:
        """03:00: every machine without a logged-in owner reboots, evicting its job."""
        now = self.engine.time
        rebooted = PowerState.REBOOTED in self.power_states
        for m, state in enumerate(self.state):
            if state in (OWNER, DOWN):
                continue
            self._stop_job(m, EVICTED_REBOOT)
            self._become_idle(m, now)
            if rebooted:
                self._power(m, PowerState.REBOOTED)
        self.engine.at(now + DAY, self.reboot_all)

    def machine_down(self, m: int) -> None:
        now = self.engine.time
        self.down[m] += 1
        if self.down[m] == 1:
            self._stop_job(m, EVICTED_REBOOT)
            self._enter(m, DOWN, now)
            self._power(m, POWER_OFF)

    def machine_up(self, m: int) -> None:
        now = self.engine.time
        self.down[m] = max(0, self.down[m] - 1)
        if self.down[m] or self.state[m] != DOWN:
            return
        self._power(m, POWER_ON)
        if self.owners[m]:
            self._enter(m, OWNER, now)
        else:
            self._become_idle(m, now)

    # -- HTC ---------------------------------------------------------------------------------
    def start_job(self, m: int, job: int) -> None:
        """Start an attempt (waking the machine if asleep: wake-on-LAN)."""
        now = self.engine.time
        if self.state[m] == SLEEP:
            self._wake_up(m)
        self._enter(m, HTC, now)
        self.job[m] = job

    def finish_job(self, m: int, j: int, outcome: AttemptOutcome) -> None:
        """Job ``j`` on ``m`` completed or was removed: the machine is idle again at once."""
        self._stop_job(m, outcome)
        self._become_idle(m, self.engine.time)

    def close(self) -> None:
        """Account the time up to now for every machine (end of replay)."""
        now = self.engine.time
        for m in range(len(self.state)):
            self.seconds[m][self.state[m]] += now - self.since[m]
            self.since[m] = now

    def core_seconds_held(self) -> float:
        """Core-seconds that jobs held (a single machine's job holds all its cores)."""
        return sum(secs[HTC] * cores for secs, cores in zip(self.seconds, self.cores, strict=True))

    def energy_by_state_wh(self) -> dict[str, float]:
        totals = [0.0] * 5
        for secs, watts in zip(self.seconds, self.watts, strict=True):
            for s in range(5):
                totals[s] += secs[s] * watts[s] / 3600.0
        return dict(zip(STATE_NAMES, totals, strict=True))
