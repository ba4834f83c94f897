"""The advice currently published, per machine, and its ClassAd form (docs/architecture.md 3).

The board is the HTTP endpoint's sink: each round replaces the advice of the machines it names;
the others keep theirs until it expires. Expired advice is never served, so a stalled daemon
leaves the pool as if the advisor did not exist.

Advice withdrawn before it expires (the policy's advice for a machine ended, or the control
group's guard made all advice neutral) is served as a withdrawal: the same attributes, neutral,
with ``AdvisorExpires`` at the withdrawal, until the advice withdrawn would have expired. A
hook that prints nothing leaves the startd's last attributes in force until their own
``AdvisorExpires``, up to ``publish.advice_lifetime`` later (docs/control-group.md, "The guard").
"""

from __future__ import annotations

import dataclasses
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
    withdraws_until: float | None = None
    """A withdrawal's: when the advice it withdraws would have expired in the startd."""

    @property
    def expires(self) -> float:
        assert self.advice.expires is not None, "advice is stamped before it is published"
        return self.advice.expires

    def served(self, now: float) -> bool:
        return (self.expires if self.withdraws_until is None else self.withdraws_until) > now

    def withdrawn(self, now: float) -> Posted:
        """The withdrawal of this advice at ``now`` (a withdrawal stays as it is)."""
        if self.withdraws_until is not None:
            return self
        neutral = dataclasses.replace(NEUTRAL_MACHINE_ADVICE, expires=now)
        return Posted(neutral, now, self.policy, self.expires)


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
                if adv != NEUTRAL_MACHINE_ADVICE and adv.expires is not None:
                    self._posted[machine] = Posted(adv, now, self.policy_label)
                    continue
                old = self._posted.pop(machine, None)
                if old is not None and old.served(now):
                    self._posted[machine] = old.withdrawn(now)

    def get(self, machine: str, now: float) -> Posted | None:
        """What the hook of ``machine`` is served: its advice, or a withdrawal of it."""
        with self._lock:
            posted = self._posted.get(machine)
        return posted if posted is not None and posted.served(now) else None

    def live(self, now: float) -> dict[str, Posted]:
        """Unexpired advice (withdrawals left out); entries past serving are dropped."""
        with self._lock:
            for machine in [m for m, p in self._posted.items() if not p.served(now)]:
                del self._posted[machine]
            return {m: p for m, p in self._posted.items() if p.withdraws_until is None}
