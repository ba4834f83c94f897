"""Per-job ``hold_until`` advice in a replay (``AdvisorHoldUntil`` live): a job kept off every
machine waits until the hold ends or the starvation bound releases it, whichever is first, and a
control job ignores it, as the shipped ``ADVISOR_ALLOWS`` does
(tests/condor/test_job_hold_expressions.py)."""

from __future__ import annotations

import numpy as np
from tracekit import H, inventory, trace

from plugins.contract.advice import Advice, JobAdvice
from plugins.contract.control import CONTROL, arm_of
from plugins.contract.policy import Policy, PolicyContext, PoolView
from simulator.campus.job_book import DONE
from simulator.campus.replay import ReplayResult, machine_infos, replay
from simulator.campus.rules import PoolRules

HOLD_S, CYCLE_S = 2 * H, 60.0


class HoldNew(Policy):
    """Keeps each new job off every machine for HOLD_S from when it is first seen."""

    NAME = "hold-new"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(jobs={job: JobAdvice(hold_until=now + HOLD_S) for job in view.new_jobs})


def run(bound: float | None, control_percent: float | None = None, n: int = 5) -> ReplayResult:
    tr = trace(inventory(n), jobs=[(4 * H + h * 600, H, float("inf")) for h in range(n)], days=2)
    policy = HoldNew(PolicyContext(machine_infos(tr), seed=1))
    rules = PoolRules(wait_bound_s=bound, control_percent=control_percent)
    return replay(tr, policy, seed=1, rules=rules)


def waits(result: ReplayResult) -> dict[str, float]:
    book = result.book
    return {
        book.ids[j]: book.finish[j] - book.runtime[j] - book.submit_t[j]
        for j in range(len(book.ids))
        if book.status[j] == DONE
    }


def test_a_held_job_starts_when_its_hold_ends() -> None:
    got = waits(run(None))
    assert len(got) == 5
    assert all(HOLD_S <= w <= HOLD_S + CYCLE_S for w in got.values()), got


def test_the_bound_releases_a_held_job_first() -> None:
    got = waits(run(H))
    assert len(got) == 5
    assert all(H <= w <= H + CYCLE_S for w in got.values()), got


def test_control_jobs_ignore_the_hold() -> None:
    got = waits(run(None, control_percent=50, n=12))
    control = {job: w for job, w in got.items() if arm_of(job, 50) == CONTROL}
    treated = {job: w for job, w in got.items() if job not in control}
    assert control and treated
    assert all(w <= CYCLE_S for w in control.values()), control
    assert all(w >= HOLD_S for w in treated.values()), treated
    assert np.isfinite(list(got.values())).all()


class HoldNewAndLook(HoldNew):
    """HoldNew, keeping the idle jobs each view counted."""

    def __init__(self, context: PolicyContext, options: object = None) -> None:
        super().__init__(context, None)
        self.idle_seen: list[int] = []

    def advise(self, view: PoolView, now: float) -> Advice:
        self.idle_seen.append(sum(view.idle_jobs_by_prior_hours))
        return super().advise(view, now)


def test_a_view_counts_the_held_jobs_as_the_schedd_shows_them_idle() -> None:
    # Jobs submitted ten minutes apart, each held two hours: the fifth one's view shows all five
    # idle, as the daemon's count of the schedd's idle jobs does (advisor/condor/job_queue.py).
    tr = trace(inventory(5), jobs=[(4 * H + h * 600, H, float("inf")) for h in range(5)], days=2)
    policy = HoldNewAndLook(PolicyContext(machine_infos(tr), seed=1))
    replay(tr, policy, seed=1)
    assert policy.idle_seen[:5] == [1, 2, 3, 4, 5]
