"""A job's ``AdvisorHoldUntil`` (frugal's keep-off of a suspected never-finisher, set by the schedd
sink), evaluated by the real classad2 in the shipped ``ADVISOR_ALLOWS``: it keeps the job off a
machine with fresh advice until that time, and not once the time passed, the machine's advice
lapsed, the starvation bound released the job, or the job is in the control group."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from advisor.condor.attributes import advice_attributes
from condor.test_deploy_expressions import candidate_ads, deploy_macros, expand
from plugins.contract.advice import MachineAdvice
from plugins.contract.control import control_bucket

BOUND_S = 3600
OPEN = MachineAdvice(rank=2.0)
TREATED = next(c for c in range(1, 100) if control_bucket(c, 0) >= 10)
CONTROL = next(c for c in range(1, 100) if control_bucket(c, 0) < 10)


def allows(
    ad: dict[str, Any],
    hold_in: float | None,
    cluster: int = TREATED,
    queued_s: float = 60,
    expires_in: float = 600,
    advice: MachineAdvice = OPEN,
    **job_attributes: Any,
) -> Any:
    import classad2

    now = time.time()
    macros = {**deploy_macros(), "ADVISOR_WAIT_BOUND": str(BOUND_S)}
    machine = classad2.ClassAd(ad)  # a real startd ad: an unscoped name falls through to the job
    for key, value in advice_attributes(advice, now - 700, now + expires_in, "t/1").items():
        machine[key] = value
    job = classad2.ClassAd(
        {"ClusterId": cluster, "ProcId": 0, "EnteredCurrentStatus": int(now - queued_s)}
    )
    job.update(job_attributes)
    if hold_in is not None:
        job["AdvisorHoldUntil"] = int(now + hold_in)
    return classad2.ExprTree(expand("ADVISOR_ALLOWS", macros)).eval(machine, job)


@pytest.mark.realdata
def test_a_job_held_until_later_is_kept_off_only_while_the_advice_counts(
    shared_data: Path,
) -> None:
    ad = dict(candidate_ads(shared_data, 1)[0])
    assert allows(ad, None) is True
    assert allows(ad, 600) is False
    assert allows(ad, -5) is True  # the hold has passed
    assert allows(ad, 600, expires_in=-5) is True  # the advisor is gone: its advice lapsed
    assert allows(ad, 600, queued_s=2 * BOUND_S) is True  # released by the starvation bound
    assert allows(ad, 600, cluster=CONTROL) is True  # the control group ignores advice


@pytest.mark.realdata
def test_a_job_cannot_rank_a_machine_for_itself(shared_data: Path) -> None:
    """START reads a name the machine ad lacks from the job's ad, so a job submitted with its
    own ``+AdvisorRankByPriorHours`` would be let onto a machine the advice keeps every class
    off; the advisor publishes the list on every advised machine, so the machine's is read."""
    ad = dict(candidate_ads(shared_data, 1)[0])
    kept_off = MachineAdvice(rank=-1.0)
    assert allows(ad, None, advice=kept_off) is False
    assert allows(ad, None, advice=kept_off, AdvisorRankByPriorHours=[1e6] * 24) is False
    assert allows(ad, None, AdvisorRank=-5.0, AdvisorHold=True) is True  # the machine's are read
