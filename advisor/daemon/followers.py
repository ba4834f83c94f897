"""Named (shared) advice on the daemon side: which machines follow which name, and its value.

A policy states a name's value once, lists a machine under it once and renews all names with one
time (``Advice.shared_until``); the sinks, though, publish per machine. This record turns each
round into per-machine advice: a machine newly following a name, and every follower of a name
whose value changed, get the name's current value, expiring at the names' time; a renewal
republishes every follower with the new time. So a sink sees what the simulator's negotiator
applies, and a stopped advisor's named advice lapses in the pool when the names would.
"""

from __future__ import annotations

import dataclasses

from plugins.contract.advice import Advice, MachineAdvice, with_ranks


class Followers:
    def __init__(self) -> None:
        self.values: dict[str, MachineAdvice] = {}
        self.name_of: dict[str, str] = {}
        self.until: float | None = None
        """When the names lapse unless renewed (the policy's last ``shared_until``)."""

    def resolve(self, advice: Advice) -> dict[str, MachineAdvice]:
        """Per-machine advice of this round (a machine's own advice wins over any name)."""
        for machine in advice.machines:
            self.name_of.pop(machine, None)
        self.name_of.update(advice.follows)
        values = self.values
        changed = {n for n in advice.shared_ranks if n in values}  # a name never told: ignored
        for name in changed:
            values[name] = with_ranks(values[name], advice.shared_ranks[name])
        changed.update(n for n, v in advice.shared.items() if values.get(n) != v)
        values.update(advice.shared)
        renewed = advice.shared_until is not None and advice.shared_until != self.until
        if renewed:
            self.until = advice.shared_until
        stamped = {
            name: self._stamped(values[name])
            for name in set(self.name_of.values())
            if name in values and (renewed or name in changed)
        }
        machines = {
            m: stamped.get(n) or self._stamped(values[n])
            for m, n in self.name_of.items()
            if (n in stamped or m in advice.follows) and n in values
        }
        machines.update(advice.machines)
        return machines

    def _stamped(self, value: MachineAdvice) -> MachineAdvice:
        """The name's value as a follower publishes it: expiring when the names lapse."""
        return value if self.until is None else dataclasses.replace(value, expires=self.until)
