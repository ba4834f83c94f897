"""Each attempt's share of its machine's draw, as the replay charges it (docs/slots.md).

A machine draws ``idle + (active - idle) * busy / units`` while ``busy`` of its ``units`` run jobs
(a partitionable slot's cores, or its static slots: ``MachineInfo.jobs_at_once``), and each busy
unit carries an equal part of it: an attempt is charged its units' part, over its duration
(``simulator/campus/shared_pool.py``). So eight one-core jobs on an eight-core machine draw the
machine's active power together, not each. The collector's slot ads give the busy units at each
poll (a claimed static slot one, a dynamic slot its cores); between two polls they stand as at the
first, and an attempt is counted among them even where a poll did not see it (it ran between
two). The history is kept for ``KEPT_S`` in memory: a longer attempt, or one that began before a
restart, is charged at the oldest rate kept for the time before it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence

from advisor.condor.startd_ads import SlotAd
from plugins.contract.clock import DAY
from plugins.contract.policy import MachineInfo

KEPT_S = 8 * DAY
Draw = Callable[[str, float, float, int], float]
"""An attempt's mean watts from its machine, start, end and cores (``CoreShares.drawing``)."""
BUSY_STATES = frozenset({"Claimed", "Preempting"})


class CoreShares:
    def __init__(self) -> None:
        self.busy: dict[str, tuple[list[float], list[int]]] = {}
        """Per machine: the times its busy units changed, and the count from each on."""
        self.partitionable: set[str] = set()

    def update(self, machines: Mapping[str, Sequence[SlotAd]], now: float) -> None:
        """The busy units of every machine the collector shows now."""
        for name, slots in machines.items():
            if any(s.jobs_at_once != 1 for s in slots):  # a dynamic slot, or room for several
                self.partitionable.add(name)
            taken = [s for s in slots if s.state in BUSY_STATES]
            busy = sum(s.cpus if s.jobs_at_once == 0 else 1 for s in taken)
            times, counts = self.busy.setdefault(name, ([], []))
            if not counts or counts[-1] != busy:
                times.append(now)
                counts.append(busy)
            old = bisect.bisect_right(times, now - KEPT_S) - 1  # the rate in force KEPT_S ago
            if old > 0:
                del times[:old], counts[:old]

    def mean_watts(
        self, info: MachineInfo | None, started: float, ended: float, cpus: int
    ) -> float:
        """The attempt's mean share of its machine's draw; 0 on a machine of no known power."""
        if info is None:
            return 0.0
        units = max(info.jobs_at_once, 1)
        mine = min(max(cpus, 1), units) if info.name in self.partitionable else 1
        times, counts = self.busy.get(info.name, ([started], [0]))
        i = max(bisect.bisect_right(times, started) - 1, 0)  # (the oldest kept, if later)
        if ended <= started:
            return self._share(info, units, mine, counts[i])
        joules, t = 0.0, started
        for j in range(i, len(times)):
            until = min(times[j + 1] if j + 1 < len(times) else ended, ended)
            joules += self._share(info, units, mine, counts[j]) * max(until - t, 0.0)
            t = max(t, until)
            if t >= ended:
                break
        return joules / (ended - started)

    def drawing(self, machines: Mapping[str, MachineInfo]) -> Draw:
        """``mean_watts`` by machine name, from the inventory ``machines``."""
        return lambda name, started, ended, cpus: self.mean_watts(
            machines.get(name), started, ended, cpus
        )

    @staticmethod
    def _share(info: MachineInfo, units: int, mine: int, busy: int) -> float:
        """Watts of ``mine`` of the ``busy`` units (itself among them) of a machine of ``units``."""
        busy = min(max(busy, mine), units)
        draw = info.idle_watts + (info.active_watts - info.idle_watts) * busy / units
        return draw * mine / busy
