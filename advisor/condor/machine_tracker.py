"""Owner sessions and power changes reconstructed from successive collector polls.

A machine's owner is present while one of its slots is in the ``Owner`` state or its keyboard was
touched within ``active_idle_s``. A session starts at the earliest evidence on the startd's own
clock: the last input (``MyCurrentTime - KeyboardIdle``), the moment a slot entered ``Owner``, or
the moment a slot started ``Preempting`` just before (the owner's return is what preempted the
job). It ends when a slot leaves ``Owner`` (its ``EnteredCurrentState``), else at the last input
plus ``active_idle_s``, else at the reading's clock. Offline ads mean asleep, absent ads and
vanished ads mean off; either ends an open session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor.condor.startd_ads import SlotAd
from plugins.contract.events import (
    Event,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
)
from plugins.contract.events import PowerState as P
from plugins.contract.policy import MachineView


def _owner_evidence(slots: Sequence[SlotAd], active_idle_s: float) -> float | None:
    """Earliest time the owner is known to be present now, or None when absent."""
    times = [s.entered or s.clock or 0.0 for s in slots if s.state == "Owner"]
    for s in slots:
        last = s.last_input
        if last is not None and s.keyboard_idle is not None and s.keyboard_idle < active_idle_s:
            times.append(last)
    return min(times) if times else None


def _session_end(slots: Sequence[SlotAd], start: float, active_idle_s: float) -> float:
    """When a session that began at ``start`` ended, from the first reading without the owner."""
    left = [s.entered for s in slots if s.entered is not None and s.entered >= start]
    if left:
        return min(left)
    inputs = [s.last_input for s in slots if s.last_input is not None]
    clocks = [s.clock for s in slots if s.clock is not None]
    if inputs and max(inputs) >= start:
        return min(max(inputs) + active_idle_s, max(clocks, default=float("inf")))
    return max(clocks, default=start)


@dataclass
class MachineTracker:
    """Per-machine memory between polls; ``state()``/``load()`` carry it across restarts."""

    active_idle_s: float = 900.0
    owner_since: dict[str, float] = field(default_factory=dict)
    preempting_since: dict[str, float] = field(default_factory=dict)
    power: dict[str, str] = field(default_factory=dict)
    busy_at: dict[str, float] = field(default_factory=dict)
    """When each machine last ran a job (a reading with a Claimed slot): a partitionable slot
    stays Unclaimed, its EnteredCurrentState the startd's start, while its dynamic slots run
    jobs, so a machine whose last job just ended looked free for days (a static slot enters
    Unclaimed as its job ends)."""

    def update(
        self, machines: Mapping[str, Sequence[SlotAd]], now: float, complete: bool = True
    ) -> list[Event]:
        """Events implied by one poll (``now``: the advisor's clock, for vanished machines).
        Not ``complete`` (a collector that has just started, whose startds have not all sent
        their ads again), a machine missing from it is not taken for one switched off."""
        events: list[Event] = []
        for name, slots in machines.items():
            events += self._machine(name, slots, now)
        for name in [m for m in self.power if m not in machines and complete]:
            # gone by our clock; its session began by its own, which may run ahead of ours. It
            # stays off (not forgotten), so that its return is reported on: the idle policies
            # count a machine off as taken until then.
            events += self._set_power(name, P.OFF, max(now, self.owner_since.get(name, now)))
        events.sort(key=lambda e: e.time)
        return events

    def _machine(self, name: str, slots: Sequence[SlotAd], now: float) -> list[Event]:
        power = P.ON if any(s.power is P.ON for s in slots) else slots[0].power
        clock = max((s.clock for s in slots if s.clock is not None), default=now)
        events = self._set_power(name, power, clock)
        if power is not P.ON:
            return events
        if any(s.state in ("Claimed", "Preempting") for s in slots):
            self.busy_at[name] = clock
        preempting = [s.entered for s in slots if s.state == "Preempting" and s.entered]
        if preempting:
            self.preempting_since.setdefault(name, min(preempting))
        evidence = _owner_evidence(slots, self.active_idle_s)
        if evidence is not None and name not in self.owner_since:
            start = min(evidence, self.preempting_since.get(name, evidence))
            self.owner_since[name] = start
            events.append(OwnerSessionStarted(start, name))
        elif evidence is None and name in self.owner_since:
            start = self.owner_since.pop(name)
            events.append(OwnerSessionEnded(_session_end(slots, start, self.active_idle_s), name))
        if not preempting:
            self.preempting_since.pop(name, None)
        return events

    def _set_power(self, name: str, power: P, t: float) -> list[Event]:
        before = self.power.get(name)
        self.power[name] = power
        if before == power:
            return []
        events: list[Event] = []
        if power is not P.ON and name in self.owner_since:
            del self.owner_since[name]
            events.append(OwnerSessionEnded(t, name))
        if before is not None or power is not P.ON:
            events.append(MachinePowerChanged(t, name, power))
        return events

    def views(self, machines: Mapping[str, Sequence[SlotAd]]) -> list[MachineView]:
        """Candidates for a job: awake machines without their owner and with an unclaimed slot
        that has cores left (with its free cores and memory), and asleep machines
        (condor_rooster can wake them)."""
        views = []
        for name, slots in sorted(machines.items()):
            if self.power.get(name) == P.SLEEP:  # woken, it takes what its slots offer
                since = min((s.entered for s in slots if s.entered), default=0.0)
                offered = [s for s in slots if s.jobs_at_once]  # (a dynamic slot is carved)
                cores = sum(s.cpus for s in offered)
                memory = sum(s.memory_mb for s in offered)
                views.append(MachineView(name, "sleep", since, None, max(cores, 1), memory))
                continue
            # a partitionable slot stays Unclaimed while its dynamic slots run jobs: it is a
            # candidate for what it has left, and none once that is nothing
            # (and memory: carved to its last MB, it takes no job)
            unclaimed = [
                s for s in slots if s.state == "Unclaimed" and s.cpus > 0 and s.memory_mb > 0
            ]
            if unclaimed and name not in self.owner_since and self.power.get(name) == P.ON:
                entered = min(s.entered or 0.0 for s in unclaimed)
                since = max(entered, self.busy_at.get(name, 0.0))
                cores = sum(s.cpus for s in unclaimed)
                memory = sum(s.memory_mb for s in unclaimed)
                can_sleep = all(s.can_sleep for s in slots)
                views.append(MachineView(name, "idle", since, None, cores, memory, can_sleep))
        return views

    def state(self) -> dict[str, Any]:
        return {
            "owner_since": dict(self.owner_since),
            "preempting_since": dict(self.preempting_since),
            "power": dict(self.power),
            "busy_at": dict(self.busy_at),
        }

    def load(self, state: Mapping[str, Any]) -> None:
        self.owner_since = {k: float(v) for k, v in state.get("owner_since", {}).items()}
        self.preempting_since = {k: float(v) for k, v in state.get("preempting_since", {}).items()}
        self.power = {k: str(v) for k, v in state.get("power", {}).items()}
        self.busy_at = {k: float(v) for k, v in state.get("busy_at", {}).items()}
