"""A machine woken from sleep stays up an hour: its sleep advice is published as "on" till then.

HTCondor's manual says a startd woken from a low power state other than ``"SHUTDOWN"`` waits an
hour before it evaluates ``HIBERNATE`` again, so that machines do not volley between sleep and
work. HTCondor 25's startd does not: ``ResMgr::checkHibernate`` re-enables the slots after the
resume and its periodic timer evaluates ``HIBERNATE`` one ``HIBERNATE_CHECK_INTERVAL`` later
(docs/slots.md, "Power"). The replay keeps the hour (``WOKEN_UP_S``), so the daemon keeps it for
HTCondor: for that long a woken machine's "reserve-off" or "may-sleep" is published as "on" (its
hold stays), and ``HIBERNATE`` leaves it to the site's own rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from plugins.contract.advice import WOKEN_UP_S, MachineAdvice, PowerAdvice
from plugins.contract.events import MachinePowerChanged, PowerState

SLEEP_ADVICE = frozenset({PowerAdvice.RESERVE_OFF, PowerAdvice.MAY_SLEEP})


class WokenMachines:
    """When each machine last woke from sleep, from the power events the source reports."""

    def __init__(self) -> None:
        self.asleep: set[str] = set()
        self.woken_at: dict[str, float] = {}

    def observe(self, event: MachinePowerChanged) -> None:
        if event.state is PowerState.SLEEP:
            self.asleep.add(event.machine)
        elif event.machine in self.asleep:  # out of sleep: on (a soft-off is not a sleep)
            self.asleep.discard(event.machine)
            if event.state is PowerState.ON:
                self.woken_at[event.machine] = event.time

    def kept_up(
        self, machines: Mapping[str, MachineAdvice], now: float
    ) -> dict[str, MachineAdvice]:
        """``machines`` with the sleep advice of those woken within ``WOKEN_UP_S`` made "on"."""
        for name in [m for m, t in self.woken_at.items() if now - t >= WOKEN_UP_S]:
            del self.woken_at[name]
        return {
            name: dataclasses.replace(adv, power=PowerAdvice.ON)
            if name in self.woken_at and adv.power in SLEEP_ADVICE
            else adv
            for name, adv in machines.items()
        }

    def state_dict(self) -> dict[str, Any]:
        return {"asleep": sorted(self.asleep), "woken_at": dict(self.woken_at)}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.asleep = set(state.get("asleep", ()))
        self.woken_at = {name: float(t) for name, t in state.get("woken_at", {}).items()}
