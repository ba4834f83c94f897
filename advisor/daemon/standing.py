"""The advice the daemon stands behind, per machine, renewed on every confirmed cycle.

A policy states only what changed (its own advice per machine, named advice and its followers);
a sink needs every machine's advice each cycle: a collector merge vanishes at the startd's next
update, and the endpoint must stop serving what nobody renewed. So each round's answer updates the
standing advice, and every cycle publishes all of it with one expiry rule: the policy's own
expiry, but never later than ``now + lifetime``. A daemon that stops renewing (stopped, or no
longer confirmed by the pool) therefore leaves the pool within one lifetime, whatever a policy
said its advice was good for.
"""

from __future__ import annotations

import dataclasses

from advisor.daemon.followers import Followers
from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice

INF = float("inf")


class StandingAdvice:
    def __init__(self) -> None:
        self.followers = Followers()
        self.advice: dict[str, MachineAdvice] = {}
        """Per machine, its advice as the policy gave it (expiry unstamped or the policy's)."""

    def update(self, decided: Advice, now: float, lifetime_s: float) -> dict[str, MachineAdvice]:
        """Fold this round's answer in; every machine's advice stamped for publishing, and
        neutral advice for the machines whose advice just ended (so sinks drop it)."""
        standing = self.advice
        ended: list[str] = []
        for machine, adv in self.followers.resolve(decided).items():
            if adv == NEUTRAL_MACHINE_ADVICE:
                if standing.pop(machine, None) is not None:
                    ended.append(machine)
            else:
                standing[machine] = adv
        for machine in [
            m for m, a in standing.items() if a.expires is not None and a.expires <= now
        ]:
            del standing[machine]
            ended.append(machine)
        cap = now + lifetime_s
        out = {
            m: dataclasses.replace(a, expires=min(INF if a.expires is None else a.expires, cap))
            for m, a in standing.items()
        }
        out.update(dict.fromkeys(ended, NEUTRAL_MACHINE_ADVICE))
        return out
