"""Whom the campus negotiator asks for advice, and the ledger it reads the answers from.

The negotiator never decodes an answer itself: its source takes the answer into an advice ledger
(``plugins/contract/ledger.py``) and hands over what changed. In a replay the source is the policy
asked directly with a ledger of its own (``AskedPolicy``); in the digital twin it is a daemon
cycle, whose own ledger (the one it publishes from) the negotiator reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from plugins.contract.advice import Advice, JobAdvice
from plugins.contract.ledger import AdviceLedger, Taken
from plugins.contract.machine_split import MachineSplit
from plugins.contract.policy import PoolView
from plugins.contract.told import what_was_told


@dataclass(frozen=True, slots=True)
class Resolved:
    """One answer as the negotiator applies it: what changed per machine, and per-job advice."""

    taken: Taken
    jobs: dict[str, JobAdvice]


@runtime_checkable
class AdviceSource(Protocol):
    @property
    def ASKS_ONLY_WHEN_FREED(self) -> bool:
        """See ``Policy.ASKS_ONLY_WHEN_FREED``."""
        ...

    @property
    def ledger(self) -> AdviceLedger:
        """What each machine carries now, machines numbered as the pool numbers them."""
        ...

    def resolve(self, view: PoolView, numbers: Sequence[int], now: float) -> Resolved:
        """Ask about ``view`` (its machines are ``numbers``) and take the answer into ``ledger``."""
        ...


class Answering(Protocol):
    """Anything answering as a policy does: a policy, or the campus power driver's latest tick."""

    @property
    def ASKS_ONLY_WHEN_FREED(self) -> bool: ...

    def advise(self, view: PoolView, now: float) -> Advice: ...


class AskedPolicy:
    """A replay's source: ``policy`` asked directly, its answers taken into a ledger of its own
    (with a control group, about the treated machines only: ``split``, as the daemon asks)."""

    def __init__(
        self,
        policy: Answering,
        index: Mapping[str, int],
        lifetime_s: float = 3600.0,
        split: MachineSplit | None = None,
    ) -> None:
        self.policy = policy
        self.index = index
        self.ledger = AdviceLedger(lifetime_s)
        self.split = split

    @property
    def ASKS_ONLY_WHEN_FREED(self) -> bool:
        return self.policy.ASKS_ONLY_WHEN_FREED

    def resolve(self, view: PoolView, numbers: Sequence[int], now: float) -> Resolved:
        split = self.split
        advice = self.policy.advise(split.ask(view) if split else view, now)
        if split:
            advice = split.tell(advice, view)
        told = what_was_told(advice, view.machines, numbers, self.index)
        return Resolved(self.ledger.take(advice, told, now), advice.jobs)
