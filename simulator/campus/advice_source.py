"""Whom the campus negotiator asks for advice: anything with a policy's ``advise``."""

from __future__ import annotations

from typing import Protocol

from plugins.contract.advice import Advice
from plugins.contract.policy import PoolView


class AdviceSource(Protocol):
    """Whom the negotiator asks: a policy in a replay, the daemon's cycle in the twin, the power
    policy's latest tick in a campus power replay."""

    @property
    def ASKS_ONLY_WHEN_FREED(self) -> bool:
        """See ``Policy.ASKS_ONLY_WHEN_FREED``."""
        ...

    def advise(self, view: PoolView, now: float) -> Advice: ...
