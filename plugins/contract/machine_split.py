"""The control group's machines: a share of the pool kept for control jobs, with neutral advice.

A split of jobs alone lets the two arms interfere through the machines they share: a policy that
steers treated jobs to the machines that rarely evict leaves the others to the control jobs, and
one that keeps treated jobs queued leaves machines free for them, so treated / control then
overstates both the saving and the cost of the advice (docs/control-group.md measures it). As in
a two-sided randomized experiment, the control arm therefore gets machines of its own: the
machines whose name falls in the control percent take only control jobs and carry no advice, the
others take only treated jobs. The daemon and the simulator apply it to every answer of the policy
through this one class, and the shipped START expression (``ADVISOR_ARM_OK`` in
``deploy/common/40``) enforces it from ``AdvisorControl`` while the advice is fresh: when it
lapses, every job may take every machine again, as without the advisor.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
from collections.abc import Iterable

from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.control import CONTROL, TREATED
from plugins.contract.policy import PoolView

CONTROL_MACHINE = MachineAdvice(hold=True, arm=CONTROL)
"""A control machine: treated jobs are kept off it (``AdvisorHold``), control jobs ignore advice."""
TREATED_MACHINE = MachineAdvice(arm=TREATED)
"""A treated machine the policy said nothing of: neutral, but not for control jobs."""


def machine_hash(name: str) -> int:
    """A stable number from the machine's name alone (the same across restarts and hosts)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big")


class MachineSplit:
    """Which machines are the control arm's, and the policy's answers with each machine's arm.

    The control arm gets exactly ``percent`` of the machines known (rounded, but at least one
    machine for each arm): those with the smallest ``machine_hash``. An exact share, not one in
    expectation, because a job's wait depends on the machines per job: on a pool of 138 machines
    a share drawn machine by machine gave the control arm 8 to 18 of them, and its mean overhead
    0.55 to 1.35 times the treated arm's under random placement for both. A machine joining later
    moves at most one machine known before across the boundary."""

    def __init__(self, percent: float, machines: Iterable[str] = ()) -> None:
        self.percent = percent
        self.hashes: dict[str, int] = {}
        self.control: frozenset[str] = frozenset()
        self.join(machines)

    def join(self, machines: Iterable[str]) -> None:
        """Machines the pool shows (known ones are ignored)."""
        new = {name: machine_hash(name) for name in machines if name not in self.hashes}
        if new:
            self.hashes.update(new)
            n = len(self.hashes)
            count = min(max(round(n * self.percent / 100), 1), n - 1)  # each arm a machine
            self.control = frozenset(
                heapq.nsmallest(count, self.hashes, key=self.hashes.__getitem__)
            )

    @property
    def active(self) -> bool:
        """Whether the machines are split: two or more (one machine cannot serve both arms, and
        then the jobs alone are split, as the expressions do without ``AdvisorControl``)."""
        return len(self.hashes) >= 2

    def is_control(self, name: str) -> bool:
        return name in self.control

    def ask(self, view: PoolView) -> PoolView:
        """``view`` without the control machines: the policy advises the treated ones only."""
        self.join(mv.name for mv in view.machines)
        if not self.active:
            return view
        treated = [mv for mv in view.machines if not self.is_control(mv.name)]
        if len(treated) == len(view.machines):
            return view
        return dataclasses.replace(view, machines=treated)

    def tell(self, answer: Advice, view: PoolView) -> Advice:
        """``answer`` to the treated part of ``view`` with every machine's arm: control machines
        of ``view`` (or named in the answer) get ``CONTROL_MACHINE``, treated ones keep what they
        were told, marked treated, and a treated machine told nothing gets ``TREATED_MACHINE``."""
        if not self.active:
            return answer
        mark = self._treated
        machines = {
            name: CONTROL_MACHINE if self.is_control(name) else mark(adv)
            for name, adv in answer.machines.items()
        }
        follows = {n: f for n, f in answer.follows.items() if not self.is_control(n)}
        for mv in view.machines:
            if self.is_control(mv.name):
                machines[mv.name] = CONTROL_MACHINE
            elif mv.name not in machines and mv.name not in follows and mv.follows is None:
                machines[mv.name] = TREATED_MACHINE
        return dataclasses.replace(
            answer,
            machines=machines,
            follows=follows,
            shared={name: mark(value) for name, value in answer.shared.items()},
        )

    @staticmethod
    def _treated(advice: MachineAdvice) -> MachineAdvice:
        return advice if advice.arm == TREATED else dataclasses.replace(advice, arm=TREATED)
