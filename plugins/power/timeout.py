"""``timeout``: switch a node off once it has been idle for t minutes (paper 001, section 5.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from plugins.contract.policy import Option
from plugins.power.base import PowerPolicy, idle_longer_than
from plugins.power.view import ClusterView, PowerDecision


def _non_negative(value: float) -> str | None:
    return None if value >= 0 else "must be >= 0 minutes (e.g. --set t=5)"


class TimeoutPolicy(PowerPolicy):
    """T(t): no reservation; idle nodes go off after ``t`` idle minutes unless the first job
    awaits them."""

    NAME = "timeout"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "t": Option(0.0, float, "idle minutes before a node is switched off", _non_negative)
    }

    def decide(self, view: ClusterView) -> PowerDecision:
        return PowerDecision(0, idle_longer_than(view, 60.0 * self.options["t"]))
