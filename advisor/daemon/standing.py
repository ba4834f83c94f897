"""The advice the daemon stands behind, per machine, read from the advice ledger every cycle.

A policy answers in deltas; the ledger (``plugins/contract/ledger.py``, the simulator's decoder
too) keeps what each machine carries and when it lapses. A sink, though, needs every machine's
advice each cycle: a collector merge vanishes at the startd's next update, and the endpoint must
stop serving what nobody renewed. So every confirmed cycle publishes all advised machines, each
expiring when the ledger says (never later than ``now + lifetime``), and neutral advice for the
machines whose advice just ended, so sinks drop it. A daemon that stops renewing (stopped, or no
longer confirmed by the pool) therefore leaves the pool within one lifetime.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice
from plugins.contract.ledger import AdviceLedger, Taken, is_neutral
from plugins.contract.policy import PoolView
from plugins.contract.told import what_was_told


class StandingAdvice:
    def __init__(self, lifetime_s: float, machines: Iterable[str] = ()) -> None:
        self.ledger = AdviceLedger(lifetime_s, resumed=True)
        self.index: dict[str, int] = {}
        """Machine name -> the ledger's number for it (in the order machines joined the pool)."""
        self.names: list[str] = []
        self.published: set[int] = set()
        self.taken = Taken()
        """What the last answer changed (the twin's negotiator applies it)."""
        for name in machines:
            self.number(name)

    def number(self, name: str) -> int:
        m = self.index.get(name)
        if m is None:
            m = self.index[name] = len(self.names)
            self.names.append(name)
        return m

    def ask(self, view: PoolView) -> PoolView:
        """``view`` with each machine saying which name it follows now (a policy need not answer
        for a machine that goes on following)."""
        follows, number = self.ledger.follows, self.number
        carried = [follows.get(number(mv.name)) for mv in view.machines]
        if all(mv.follows == f for mv, f in zip(view.machines, carried, strict=True)):
            return view  # the twin's views say it already (the negotiator's ledger)
        machines = [
            mv if mv.follows == f else dataclasses.replace(mv, follows=f)
            for mv, f in zip(view.machines, carried, strict=True)
        ]
        return dataclasses.replace(view, machines=machines)

    def update(self, view: PoolView, decided: Advice, now: float) -> dict[str, MachineAdvice]:
        """Fold the policy's answer to ``view`` in; every advised machine's advice stamped for
        publishing, and neutral advice for the machines whose advice just ended."""
        ledger = self.ledger
        ledger.expire(now)
        numbers = [self.number(mv.name) for mv in view.machines]
        for name in (*decided.machines, *decided.follows):  # answered without being asked
            self.number(name)
        told = what_was_told(decided, view.machines, numbers, self.index)
        self.taken = ledger.take(decided, told, now)
        cap = now + ledger.lifetime_s
        out: dict[str, MachineAdvice] = {}
        for m in ledger.advised():
            stamped = ledger.stamped(m, cap)
            if stamped is not None and not is_neutral(ledger.get(m)):
                out[self.names[m]] = stamped
        live = {self.index[name] for name in out}
        for m in self.published - live:
            out[self.names[m]] = NEUTRAL_MACHINE_ADVICE
        self.published = live
        return out
