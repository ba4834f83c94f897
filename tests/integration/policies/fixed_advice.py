"""``fixed-advice``: a test-only policy whose advice is set by its options, so a real-pool test
can predict where jobs go; it also keeps every ended attempt it observes, per machine, so the
test can see in the daemon's snapshot which outcomes reached the policy.

Registered as an entry point by the ``advisor_test_policies`` dist-info next to this file: a
daemon started with this directory on ``PYTHONPATH`` finds it like any installed policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from plugins.contract.advice import Advice, JobAdvice, MachineAdvice
from plugins.contract.events import AttemptEnded, Event
from plugins.contract.policy import Option, Policy, PolicyContext, PoolView


def parse_ranks(text: str) -> dict[str, float]:
    """``MACHINE=RANK,MACHINE=RANK``."""
    pairs = (item.split("=") for item in text.split(",") if item.strip())
    return {machine.strip(): float(rank) for machine, rank in pairs}


def parse_names(text: str) -> frozenset[str]:
    return frozenset(name.strip() for name in text.split(",") if name.strip())


class FixedAdvice(Policy):
    NAME = "fixed-advice"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "ranks": Option({}, parse_ranks, "MACHINE=RANK,... advised on every cycle"),
        "hold": Option(frozenset(), parse_names, "MACHINE,... advised AdvisorHold = true"),
        "prios": Option({}, parse_ranks, "JOB=PRIO,... advised as JobPrio while queued"),
        "holds": Option({}, parse_ranks, "JOB=SECONDS,... kept off every machine that long"),
    }
    WANTS = frozenset({AttemptEnded})

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        self.ended: dict[str, list[list[str]]] = {}
        self.first_advised: float | None = None

    def observe(self, event: Event) -> None:
        assert isinstance(event, AttemptEnded)
        self.ended.setdefault(event.machine, []).append([event.job_id, event.outcome.value])

    def advise(self, view: PoolView, now: float) -> Advice:
        hold = self.options["hold"]
        start = self.first_advised = self.first_advised or now
        jobs = {job: JobAdvice(prio=p) for job, p in self.options["prios"].items()}
        holds = self.options["holds"].items()
        jobs.update((job, JobAdvice(hold_until=start + s)) for job, s in holds)
        return Advice(
            {m: MachineAdvice(rank=r, hold=m in hold) for m, r in self.options["ranks"].items()},
            jobs=jobs,
        )

    def state_dict(self) -> dict[str, Any]:
        return {"ended": self.ended}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.ended = {m: list(rows) for m, rows in state["ended"].items()}
