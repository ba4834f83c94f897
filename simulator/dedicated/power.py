"""Node power states and the energy model of paper 001, section 3.3 (E_r = integral of P_s dt).

Power is drawn per core (a resource in the paper); a node switches as a whole, so an idle core on
a computing node still draws idle power and counts as waste (eq. 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class NodeState(IntEnum):
    OFF = 0
    IDLE = 1
    COMPUTING = 2
    SWITCHING_ON = 3
    SWITCHING_OFF = 4


class CoreUse(IntEnum):
    """What a core is drawing power for; the meter counts cores per use."""

    COMPUTING = 0
    IDLE = 1
    OFF = 2
    SWITCHING_ON = 3
    SWITCHING_OFF = 4


WASTE_USES = (CoreUse.IDLE, CoreUse.SWITCHING_ON, CoreUse.SWITCHING_OFF)
"""Eq. 4: E_waste = E_idle + E_off->on + E_on->off."""


@dataclass(frozen=True)
class PowerProfile:
    """Watts per core in each use and transition times in seconds; default Taurus (figure 4)."""

    computing_w: float = 190.0
    idle_w: float = 95.0
    off_w: float = 9.75
    switching_on_w: float = 125.0
    switching_off_w: float = 101.0
    switch_on_s: float = 60.0
    switch_off_s: float = 180.0

    def watts(self) -> np.ndarray:
        """Per-core power indexed by ``CoreUse``."""
        return np.array(
            [self.computing_w, self.idle_w, self.off_w, self.switching_on_w, self.switching_off_w]
        )

    def cycle_j(self) -> float:
        """Energy of one off-then-on cycle of one core (joules)."""
        return self.switching_off_w * self.switch_off_s + self.switching_on_w * self.switch_on_s


class EnergyMeter:
    """Integrates piecewise-constant power: cores per use times watts times elapsed seconds."""

    def __init__(self, profile: PowerProfile, start: float) -> None:
        self.watts = profile.watts()
        self.cores = np.zeros(len(CoreUse), dtype=np.int64)
        self.joules = np.zeros(len(CoreUse))
        self.last = start

    def advance(self, now: float) -> None:
        if now > self.last:
            self.joules += self.cores * self.watts * (now - self.last)
            self.last = now

    def move(self, now: float, cores: int, src: CoreUse | None, dst: CoreUse | None) -> None:
        """``cores`` change use at ``now`` (None: they enter or leave the platform)."""
        self.advance(now)
        if src is not None:
            self.cores[src] -= cores
        if dst is not None:
            self.cores[dst] += cores

    def waste_j(self) -> float:
        return float(sum(self.joules[u] for u in WASTE_USES))

    def total_j(self) -> float:
        return float(self.joules.sum())
