"""``low-power-first``: start jobs on the machines that draw least, and none in one room.

Only ``plugins.contract`` is imported: the contract is what a policy may rely on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.events import AttemptEnded, AttemptOutcome, Event
from plugins.contract.policy import Option, Policy, PoolView


def check_positive(value: float) -> str | None:
    """An option's check: None when fine, else what is wrong (shown with the option's name)."""
    return None if value > 0 else "must be above 0"


def parse_room(text: str) -> str | None:
    """``off`` (or empty): hold no room."""
    return None if text.strip().lower() in ("", "off") else text.strip()


class LowPowerFirst(Policy):
    """Prefer the free machines with the lowest active power; hold one room (no new jobs there).

    The first paragraph of this docstring is what ``htcondor-advisor policies`` prints."""

    NAME = "low-power-first"  # the entry point's name
    VERSION = "1"  # published in AdvisorPolicy as low-power-first/1
    SERVES = frozenset({"campus"})  # the campus pool and the daemon (plugins/contract/registry.py)
    WANTS = frozenset({AttemptEnded})  # observe() gets only these events
    ASKS_ONLY_WHEN_FREED = True  # the advice does not depend on a free machine being asleep
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        # Option(default, parser from the --set text, help line, check of the parsed value)
        "held_room": Option(None, parse_room, "a room (cluster) that takes no new job, or off"),
        "weight": Option(1000.0, float, "rank = weight / active watts", check_positive),
    }

    def __init__(self, context: Any, options: Any = None) -> None:
        super().__init__(context, options)  # parses and checks the options: self.options
        self.evictions: Counter[str] = Counter()  # per room, learned (see state_dict)

    def observe(self, event: Event) -> None:
        if isinstance(event, AttemptEnded) and event.outcome is AttemptOutcome.EVICTED_OWNER:
            info = self.context.machines.get(event.machine)
            if info is not None:
                self.evictions[info.cluster] += 1

    def advise(self, view: PoolView, now: float) -> Advice:
        held, weight = self.options["held_room"], self.options["weight"]
        advice = Advice()
        for mv in view.machines:  # the free (idle or asleep) machines only
            info = self.context.machines[mv.name]
            advice.machines[mv.name] = MachineAdvice(
                rank=weight / info.active_watts,  # higher first; a negative rank keeps jobs off
                hold=info.cluster == held,
            )
        return advice

    def explain(self, machine: str) -> dict[str, Any]:
        info = self.context.machines.get(machine)
        if info is None:
            return {}
        evictions = self.evictions[info.cluster]
        return {"low-power-first": {"room": info.cluster, "owner evictions in the room": evictions}}

    def state_dict(self) -> dict[str, Any]:
        return {"evictions": dict(self.evictions)}  # JSON: dicts, lists, text, numbers

    def load_state(self, state: Any) -> None:
        self.evictions = Counter(state["evictions"])
