"""The shipped starvation bound, evaluated by the real classad2: with ``ADVISOR_WAIT_BOUND`` set
(a site's local override), a job idle past it in its current wait (``EnteredCurrentStatus``)
passes a held machine's START, its advice rank is neutral and held slots stay in matchmaking; a
job that entered the queue later is still kept off;
with the shipped 0 nothing is released."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from advisor.condor.attributes import advice_attributes
from condor.test_deploy_expressions import candidate_ads, deploy_macros, expand
from plugins.contract.advice import MachineAdvice

BOUND_S = 3600


@pytest.fixture
def startd_ad(shared_data: Path) -> dict[str, Any]:
    """A real startd ad: an unscoped name is looked up in it (MY), then in the job (TARGET)."""
    return dict(candidate_ads(shared_data, 1)[0])


def evaluate(
    ad: dict[str, Any],
    name: str,
    advice: MachineAdvice,
    queued_s: float | None,
    bound: int,
    job_attributes: dict[str, Any] | None = None,
) -> Any:
    import classad2

    now = time.time()
    macros = {**deploy_macros(), "ADVISOR_WAIT_BOUND": str(bound), "ADVISOR_CONTROL_PERCENT": "0"}
    machine = classad2.ClassAd(ad)
    for key, value in advice_attributes(advice, now - 10, now + 600, "t/1").items():
        machine[key] = value
    job = classad2.ClassAd({"ClusterId": 1, "ProcId": 0, **(job_attributes or {})})
    if queued_s is not None:
        job["EnteredCurrentStatus"] = int(now - queued_s)
    return classad2.ExprTree(expand(name, macros)).eval(machine, job)


@pytest.mark.parametrize(
    "advice", [MachineAdvice(hold=True), MachineAdvice(rank=5.0, rank_by_prior_hours=(-1.0,) * 24)]
)
def test_a_job_past_the_bound_is_matched_as_without_advice(
    startd_ad: dict[str, Any], advice: MachineAdvice
) -> None:
    assert evaluate(startd_ad, "ADVISOR_ALLOWS", advice, 2 * BOUND_S, BOUND_S) is True
    assert evaluate(startd_ad, "ADVISOR_RANK", advice, 2 * BOUND_S, BOUND_S) == 0.0
    assert evaluate(startd_ad, "ADVISOR_ALLOWS", advice, 60, BOUND_S) is False  # not yet
    assert (
        evaluate(startd_ad, "ADVISOR_ALLOWS", advice, None, BOUND_S) is False
    )  # no EnteredCurrentStatus: not released
    assert (
        evaluate(startd_ad, "ADVISOR_ALLOWS", advice, 2 * BOUND_S, 0) is False
    )  # the shipped default
    # submitted long ago, but requeued by an eviction half a bound ago: still advised
    requeued = {"QDate": int(time.time() - 10 * BOUND_S)}
    assert evaluate(startd_ad, "ADVISOR_ALLOWS", advice, BOUND_S / 2, BOUND_S, requeued) is False
    # a job factory's proc inherits its cluster's EnteredCurrentStatus: it waits from the time
    # it was materialized, not as if it had waited since its cluster's submission
    made = {"JobMaterializeDate": int(time.time() - 60)}
    assert evaluate(startd_ad, "ADVISOR_ALLOWS", advice, 2 * BOUND_S, BOUND_S, made) is False
    made = {"JobMaterializeDate": int(time.time() - 2 * BOUND_S)}
    assert evaluate(startd_ad, "ADVISOR_ALLOWS", advice, 3 * BOUND_S, BOUND_S, made) is True


def test_held_slots_stay_in_matchmaking_only_with_a_bound(startd_ad: dict[str, Any]) -> None:
    held = MachineAdvice(hold=True)
    assert evaluate(startd_ad, "NEGOTIATOR_SLOT_CONSTRAINT", held, None, 0) is False
    assert evaluate(startd_ad, "NEGOTIATOR_SLOT_CONSTRAINT", held, None, BOUND_S) is True
    ranked = MachineAdvice(rank=2.0)
    assert (
        evaluate(startd_ad, "ADVISOR_RANK", ranked, 60, BOUND_S) == 2.0
    )  # young jobs keep the advice
