"""The starvation bound (``PoolRules.wait_bound_s``, ``ADVISOR_WAIT_BOUND``): advice that would
keep every job off every machine forever keeps each job waiting at most the bound plus one
negotiation cycle, on single and partitionable machines; a pool without advice releases nothing,
so its replay is the same with or without a bound."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tracekit import MONDAY, H, Recorder, inventory, trace

from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.events import AttemptStarted, Event
from plugins.contract.policy import Policy, PolicyContext, PoolView
from simulator.campus.job_book import DONE
from simulator.campus.replay import ReplayResult, machine_infos, replay
from simulator.campus.rules import PoolRules
from simulator.campus.summary import summarize, write_outputs
from simulator.trace_model import PARTITIONABLE, Trace

BOUND_S, CYCLE_S = 3 * H, 60.0


class KeepOff(Policy):
    """Holds every machine it is asked about: without a bound no job would ever start."""

    NAME = "keep-off"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(machines={m.name: MachineAdvice(hold=True) for m in view.machines})


def pool(slots: str = "single") -> Trace:
    jobs = [(h * H, H, float("inf")) for h in (1, 2, 2, 5, 9)]
    tr = trace(inventory(3), jobs=jobs, days=2)
    tr.inventory.machines = [replace(m, slots=slots) for m in tr.inventory.machines]
    return tr


def run(tr: Trace, policy_class: type[Policy], bound: float | None) -> ReplayResult:
    policy = policy_class(PolicyContext(machine_infos(tr), seed=1))
    return replay(tr, policy, seed=1, rules=PoolRules(wait_bound_s=bound))


def waits(result: ReplayResult) -> list[float]:
    book = result.book
    done = np.asarray(book.status) == DONE
    finish, submit, runtime = (
        np.asarray(x)[done] for x in (book.finish, book.submit_t, book.runtime)
    )
    return (finish - runtime - submit).tolist()


def test_without_a_bound_advice_can_keep_jobs_waiting_forever() -> None:
    assert waits(run(pool(), KeepOff, None)) == []


@pytest.mark.parametrize("slots", ["single", PARTITIONABLE])
def test_the_bound_releases_every_job_within_one_cycle_of_it(slots: str, tmp_path: Path) -> None:
    result = run(pool(slots), KeepOff, BOUND_S)
    got = waits(result)
    assert len(got) == 5
    assert all(BOUND_S <= w <= BOUND_S + CYCLE_S for w in got), got
    summary = summarize(result)
    assert summary["wait_bound"] == {"bound_s": BOUND_S, "released_jobs": 5}
    write_outputs(result, summary, tmp_path)
    lines = (tmp_path / "jobs.csv").read_text().splitlines()
    assert lines[0].endswith(",released") and all(line.endswith(",1") for line in lines[1:])


def test_a_pool_without_advice_is_the_same_with_a_bound() -> None:
    busy = trace(inventory(1), jobs=[(0.0, 10 * H, float("inf"))] * 4, days=2)

    def figures(bound: float | None) -> dict[str, Any]:
        summary = summarize(run(busy, Recorder, bound))
        summary.pop("sim"), summary.pop("wait_bound", None)
        return summary

    assert figures(None) == figures(H)  # the fourth job waits 30 h: no advice kept it


class KeepOffTheRequeued(Policy):
    """Keeps jobs that ran before (class 1 and up) off every machine, and notes each start."""

    NAME = "keep-off-requeued"
    WANTS = frozenset({AttemptStarted})

    def __init__(self, context: PolicyContext, options: Any = None) -> None:
        super().__init__(context, options)
        self.starts: list[float] = []

    def observe(self, event: Event) -> None:
        assert isinstance(event, AttemptStarted)
        self.starts.append(event.time)

    def advise(self, view: PoolView, now: float) -> Advice:
        row = (5.0,) + (-1.0,) * 23
        return Advice(
            machines={m.name: MachineAdvice(rank_by_prior_hours=row) for m in view.machines}
        )


def test_the_bound_counts_each_wait_from_when_the_job_entered_the_queue() -> None:
    # A 30-hour job submitted at 20:00 runs until the 03:00 reboot evicts it; requeued as class
    # 7 it is kept off, and released 3 hours after it entered the queue again, not at once (a
    # bound counted from its submission would have passed long before).
    tr = trace(inventory(1), jobs=[(20 * H, 30 * H, float("inf"))], days=3)
    policy = KeepOffTheRequeued(PolicyContext(machine_infos(tr), seed=1))
    replay(tr, policy, seed=1, rules=PoolRules(wait_bound_s=BOUND_S))
    first, second = (t - MONDAY for t in policy.starts[:2])
    assert first - 20 * H < CYCLE_S
    reboot = 27 * H  # 03:00 the next day
    assert reboot + BOUND_S <= second <= reboot + BOUND_S + 10 * CYCLE_S, (second - reboot) / H


class RankEverywhere(KeepOffTheRequeued):
    """Ranks every class on every machine: advice that keeps no job waiting."""

    NAME = "rank-everywhere"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(machines={m.name: MachineAdvice(rank=1.0) for m in view.machines})


def test_a_job_evicted_long_after_its_submission_goes_before_younger_released_jobs() -> None:
    # Job 0 (submitted 20:00, 10 hours) runs until the 03:00 reboot evicts it. Job 1 (21:00) has
    # waited for the one machine since, so the bound has released it. The schedd offers jobs by
    # QDate: job 0, advised again in its new wait, starts first, as on a pool without advice.
    tr = trace(
        inventory(1), jobs=[(20 * H, 10 * H, float("inf")), (21 * H, H, float("inf"))], days=3
    )
    policy = RankEverywhere(PolicyContext(machine_infos(tr), seed=1))
    result = replay(tr, policy, seed=1, rules=PoolRules(wait_bound_s=BOUND_S))
    book = result.book
    last_start = [book.finish[j] - book.runtime[j] for j in (0, 1)]
    assert len(policy.starts) == 3 and policy.starts[1] == last_start[0] < last_start[1]
    assert summarize(result)["wait_bound"]["released_jobs"] == 1  # job 1: by congestion alone


def test_a_pool_without_the_starvation_bound_is_said() -> None:
    from advisor.condor.factory import unbounded_wait

    assert unbounded_wait("86400") is None and unbounded_wait(" 3600 ") is None
    assert unbounded_wait("24 * 3600") is None  # (evaluated by the real classad2, as START does)
    assert unbounded_wait(None) == "ADVISOR_WAIT_BOUND is not set in HTCondor"
    assert unbounded_wait("0") == "ADVISOR_WAIT_BOUND is 0 in HTCondor"
    assert "not a number" in str(unbounded_wait("$(X)"))
    assert "not a number" in str(unbounded_wait("a day"))
