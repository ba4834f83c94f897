"""Startd ads as the collector returns them, reduced to what the advisor reads, slot by slot.

Only the projected attributes are fetched (a 10,000-slot pool answers in one small query).
Values an offline or absent ad carries for a machine that is not there (KeyboardIdle, clocks)
are dropped here, as are impossible ones, so nothing downstream mistakes them for activity.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from plugins.contract.events import PowerState

CLUSTER_ATTR = "AdvisorCluster"
TYPE_ATTR = "AdvisorMachineType"
WAKEABLE_ATTR = "AdvisorWakeable"
STARTD_PROJECTION = (
    "Name",
    "Machine",
    "State",
    "Activity",
    "EnteredCurrentState",
    "MyCurrentTime",
    "KeyboardIdle",
    "Offline",
    "Absent",
    "Cpus",
    "Memory",
    "TotalCpus",
    "SlotType",
    "TotalSlotCpus",
    "CanHibernate",
    "IsWakeAble",
    WAKEABLE_ATTR,
    CLUSTER_ATTR,
    TYPE_ATTR,
)


@dataclass(frozen=True, slots=True)
class SlotAd:
    """One slot; times are on the startd's clock (``MyCurrentTime``), None when unknown."""

    name: str
    machine: str
    state: str
    entered: float | None
    clock: float | None
    keyboard_idle: float | None
    power: PowerState
    cpus: int
    """The slot's cores: a partitionable slot's are what its dynamic slots left (0 when full)."""
    memory_mb: float
    """The slot's memory, likewise (inf when the ad does not say)."""
    cluster: str | None
    mtype: str | None
    jobs_at_once: int
    """One-core jobs the slot adds to its machine's capacity: a partitionable slot's total cores,
    none for a dynamic slot (carved from it), one for a static slot (docs/slots.md)."""
    can_sleep: bool = True
    """False where the startd says it ignores HIBERNATE: it supports no sleep state
    (``CanHibernate``) or its network card cannot wake it (``IsWakeAble``), unless the site says
    it wakes anyway (``AdvisorWakeable = true``, for ``HIBERNATION_OVERRIDE_WOL``)."""

    @property
    def last_input(self) -> float | None:
        """When the owner last touched the machine: ``MyCurrentTime - KeyboardIdle``."""
        if self.clock is None or self.keyboard_idle is None:
            return None
        return self.clock - self.keyboard_idle


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def slot_from_ad(ad: Mapping[str, Any]) -> SlotAd | None:
    """The slot an ad describes, or None for an ad without ``Name`` and ``Machine``."""
    name, machine = _text(ad.get("Name")), _text(ad.get("Machine"))
    if name is None or machine is None:
        return None
    if ad.get("Absent") is True:
        power = PowerState.OFF
    elif ad.get("Offline") is True:
        power = PowerState.SLEEP
    else:
        power = PowerState.ON
    clock = _number(ad.get("MyCurrentTime"))
    idle = _number(ad.get("KeyboardIdle"))
    if power is not PowerState.ON or clock is None or idle is None or not 0 <= idle <= clock:
        idle = None
    cpus = _number(ad.get("Cpus"))
    if cpus is None:
        cpus = _number(ad.get("TotalCpus"))
    memory = _number(ad.get("Memory"))
    return SlotAd(
        name=name,
        machine=machine,
        state=_text(ad.get("State")) or "Unknown",
        entered=_number(ad.get("EnteredCurrentState")),
        clock=clock if power is PowerState.ON else None,
        keyboard_idle=idle,
        power=power,
        cpus=max(0, int(cpus)) if cpus is not None else 1,
        memory_mb=max(0.0, memory) if memory is not None else math.inf,
        cluster=_text(ad.get(CLUSTER_ATTR)),
        mtype=_text(ad.get(TYPE_ATTR)),
        jobs_at_once=_jobs_at_once(ad),
        can_sleep=ad.get("CanHibernate") is not False
        and (ad.get("IsWakeAble") is not False or ad.get(WAKEABLE_ATTR) is True),
    )


def _jobs_at_once(ad: Mapping[str, Any]) -> int:
    kind = _text(ad.get("SlotType"))
    if kind == "Dynamic":
        return 0
    if kind != "Partitionable":
        return 1
    total = _number(ad.get("TotalSlotCpus"))
    if total is None:
        total = _number(ad.get("TotalCpus"))
    return max(1, int(total)) if total is not None else 1


def group_by_machine(ads: Iterable[Mapping[str, Any]]) -> dict[str, list[SlotAd]]:
    """Slots by ``Machine``, each machine's slots in ``Name`` order."""
    machines: dict[str, list[SlotAd]] = {}
    for ad in ads:
        slot = slot_from_ad(ad)
        if slot is not None:
            machines.setdefault(slot.machine, []).append(slot)
    for slots in machines.values():
        slots.sort(key=lambda s: s.name)
    return machines
