"""Per-job ``needs_hours`` advice in a replay (``AdvisorNeedsHours`` live): the job is ranked in
the class of that many hours when it is more than its own, capped at the last class, as the
shipped ``ADVISOR_CLASS`` reads it (tests/condor/test_prior_hours.py)."""

from __future__ import annotations

import pytest
from tracekit import H, inventory, trace

from plugins.contract.advice import PRIOR_HOURS_CLASSES, Advice, JobAdvice, MachineAdvice
from plugins.contract.policy import Policy, PolicyContext, PoolView
from simulator.campus.replay import machine_infos, replay
from simulator.trace_model import OpeningHours

SHORT_FIRST = tuple(2.0 if k < 5 else 1.0 for k in range(PRIOR_HOURS_CLASSES))
"""pc0's ranks: best for classes 0-4; pc1's are the reverse."""


class ClassedSecondJob(Policy):
    """Ranks pc0 first for classes 0-4 and pc1 first from class 5; advises ``needs`` hours for
    the second job."""

    NAME = "classed-second-job"

    def __init__(self, context: PolicyContext, needs: int | None) -> None:
        super().__init__(context)
        self.needs = needs

    def advise(self, view: PoolView, now: float) -> Advice:
        long_first = tuple(3.0 - r for r in SHORT_FIRST)
        machines = {
            "pc0": MachineAdvice(rank_by_prior_hours=SHORT_FIRST),
            "pc1": MachineAdvice(rank_by_prior_hours=long_first),
        }
        jobs = {job: JobAdvice(needs_hours=self.needs) for job in view.new_jobs if job == "1.0"}
        return Advice(machines, jobs=jobs)


@pytest.mark.parametrize(
    ("needs", "second_on"), [(None, "pc0"), (0, "pc0"), (4, "pc0"), (5, "pc1"), (40, "pc1")]
)
def test_a_job_advised_to_need_more_hours_is_ranked_in_that_class(
    needs: int | None, second_on: str
) -> None:
    """Owners never come; two one-hour jobs, the second after the first has finished."""
    tr = trace(
        inventory(2, OpeningHours((None,) * 7)),
        jobs=[(0.1 * H, H, 9 * H), (2 * H, H, 9 * H)],
        days=0.5,
    )
    result = replay(tr, ClassedSecondJob(PolicyContext(machine_infos(tr), seed=0), needs), seed=0)
    book = result.book
    assert [book.machine_names[m] for m in book.machine[:2]] == ["pc0", second_on]
