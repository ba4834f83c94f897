"""The advice currently published, per machine, and its ClassAd form (DESIGN section 3).

The board is the HTTP endpoint's sink: each round replaces the advice of the machines it names;
the others keep theirs until it expires. Expired advice is never served, so a stalled daemon
leaves the pool as if the advisor did not exist.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from plugins.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice


@dataclass(frozen=True, slots=True)
class Posted:
    advice: MachineAdvice
    updated: float
    policy: str

    @property
    def expires(self) -> float:
        assert self.advice.expires is not None, "advice is stamped before it is published"
        return self.advice.expires


def _number(x: float) -> str:
    return repr(round(float(x), 6)) if x != int(x) else str(int(x))


def classad_attributes(posted: Posted) -> dict[str, str]:
    """Attribute name -> ClassAd expression text, as a STARTD_CRON hook prints them."""
    adv = posted.advice
    attrs = {"AdvisorRank": _number(adv.rank)}
    if adv.rank_by_prior_hours is not None:
        attrs["AdvisorRankByPriorHours"] = (
            "{" + ", ".join(_number(r) for r in adv.rank_by_prior_hours) + "}"
        )
    attrs["AdvisorHold"] = "true" if adv.hold else "false"
    if adv.predicted_idle_s is not None:
        attrs["AdvisorPredictedIdle"] = _number(adv.predicted_idle_s)
    attrs["AdvisorPower"] = f'"{adv.power.value}"'
    attrs["AdvisorUpdated"] = _number(posted.updated)
    attrs["AdvisorExpires"] = _number(posted.expires)
    attrs["AdvisorPolicy"] = f'"{posted.policy}"'
    return attrs


def hook_lines(posted: Posted | None) -> str:
    """``Attr = value`` lines for one machine; empty when there is no live advice."""
    if posted is None:
        return ""
    return "".join(f"{k} = {v}\n" for k, v in classad_attributes(posted).items())


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
