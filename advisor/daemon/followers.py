"""Named (shared) advice on the daemon side: which machines follow which name, and its value.

A policy states a name's value once and lists a machine under it once; the sinks, though, publish
per machine. This record turns each round into per-machine advice: a machine newly following a
name, and every follower of a name whose value changed, get the name's current value; so a sink
sees what the simulator's negotiator applies.
"""

from __future__ import annotations

from plugins.advice import Advice, MachineAdvice


class Followers:
    def __init__(self) -> None:
        self.values: dict[str, MachineAdvice] = {}
        self.name_of: dict[str, str] = {}

    def resolve(self, advice: Advice) -> dict[str, MachineAdvice]:
        """Per-machine advice of this round (a machine's own advice wins over any name)."""
        for machine in advice.machines:
            self.name_of.pop(machine, None)
        self.name_of.update(advice.follows)
        values = self.values
        changed = {n for n, v in advice.shared.items() if values.get(n) != v}
        values.update(advice.shared)
        machines = {
            m: values[n]
            for m, n in self.name_of.items()
            if (n in changed or m in advice.follows) and n in values
        }
        machines.update(advice.machines)
        return machines
