"""The advice currently published, per machine, and its ClassAd form (docs/architecture.md 3).

The board is the HTTP endpoint's sink: each round replaces the advice of the machines it names;
the others keep theirs until it expires. Expired advice is never served, so a stalled daemon
leaves the pool as if the advisor did not exist.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from advisor.condor.attributes import advice_attributes, attribute_lines
from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice


@dataclass(frozen=True, slots=True)
class Posted:
    advice: MachineAdvice
    updated: float
    policy: str

    @property
    def expires(self) -> float:
        assert self.advice.expires is not None, "advice is stamped before it is published"
        return self.advice.expires


def hook_lines(posted: Posted | None) -> str:
    """``Attr = value`` lines for one machine; empty when there is no live advice.

    The encoding is ``advisor.condor.attributes``, the one the collector merge sends.
    """
    if posted is None:
        return ""
    attrs = advice_attributes(posted.advice, posted.updated, posted.expires, posted.policy)
    return attribute_lines(attrs)


def as_json(posted: Posted) -> dict[str, Any]:
    adv = posted.advice
    return {
        "rank": adv.rank,
        "rank_by_prior_hours": list(adv.rank_by_prior_hours) if adv.rank_by_prior_hours else None,
        "hold": adv.hold,
        "predicted_idle_s": adv.predicted_idle_s,
        "power": adv.power.value,
        "updated": posted.updated,
        "expires": posted.expires,
        "policy": posted.policy,
        "arm": adv.arm,
    }


class AdviceBoard:
    """Thread-safe: the host writes from the scheduler, the endpoint reads from its threads."""

    name = "http"

    def __init__(self, policy_label: str = "") -> None:
        self.policy_label = policy_label
        self._posted: dict[str, Posted] = {}
        self._lock = threading.Lock()

    def publish(self, advice: Advice, now: float) -> None:
        with self._lock:
            for machine, adv in advice.machines.items():
                if adv == NEUTRAL_MACHINE_ADVICE or adv.expires is None:
                    self._posted.pop(machine, None)
                else:
                    self._posted[machine] = Posted(adv, now, self.policy_label)

    def get(self, machine: str, now: float) -> Posted | None:
        with self._lock:
            posted = self._posted.get(machine)
        return posted if posted is not None and posted.expires > now else None

    def live(self, now: float) -> dict[str, Posted]:
        """Unexpired advice; expired entries are dropped on the way."""
        with self._lock:
            expired = [m for m, p in self._posted.items() if p.expires <= now]
            for machine in expired:
                del self._posted[machine]
            return dict(self._posted)
