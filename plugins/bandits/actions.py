"""A placement bandit's actions and the machines behind them, growing as machines join.

An action is a machine (computer level), a cluster, or "run" (system level). A replay knows every
machine when the bandit is built; a live pool reports them after, so actions are added as their
first machine appears: after the known ones, sorted among themselves, so a replay's inventory
gives sorted actions. Vanished machines stay: their action is simply never free.
"""

from __future__ import annotations

from collections.abc import Sequence

from plugins.bandits.rewards import energy_scale
from plugins.contract.policy import MachineInfo


class ActionMap:
    def __init__(self, level: str) -> None:
        self.level = level
        self.of: dict[str, str] = {}
        """Each machine's action."""
        self.actions: list[str] = []
        self.place_of: dict[str, int] = {}
        """Each machine's action as its place in ``actions`` (the groups of ``FreeMachines``)."""
        self.watts: dict[str, float] = {}
        self.energy: dict[str, float] = {}
        """Eq. 5's energy term per machine: its active draw between the best and worst known
        (rescaled as machines join; rewards already learned keep the scale they had)."""

    def join(self, machines: Sequence[MachineInfo]) -> list[str] | None:
        """Add machines not known yet; the actions they add (None: no machine was new)."""
        new = [m for m in machines if m.name not in self.of]
        if not new:
            return None
        for info in new:
            self.of[info.name] = self._action(info)
            self.watts[info.name] = info.active_watts
        added = sorted({self.of[m.name] for m in new}.difference(self.actions))
        self.actions.extend(added)
        position = {action: i for i, action in enumerate(self.actions)}
        self.place_of.update((m.name, position[self.of[m.name]]) for m in new)
        best, worst = min(self.watts.values()), max(self.watts.values())
        self.energy = {name: energy_scale(w, best, worst) for name, w in self.watts.items()}
        return added

    def _action(self, machine: MachineInfo) -> str:
        if self.level == "computer":
            return machine.name
        if self.level == "cluster":
            return machine.cluster
        return "run"
