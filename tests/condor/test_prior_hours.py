"""A job's prior-hours class as the pool's expression reads it (real classad2 on the shipped
``ADVISOR_CLASS``: the greater of its own class and a policy's ``AdvisorNeedsHours``), and the
idle jobs whose class the daemon knows better (their longest attempt is not their last) listed
for the schedd sink's ``AdvisorPriorHours`` edit."""

from __future__ import annotations

from typing import Any

import classad2
import pytest

from advisor.condor.job_queue import QueueTracker, pool_prior_class
from condor.test_deploy_expressions import deploy_macros, expand
from plugins.contract.advice import PRIOR_HOURS_CLASSES

NOW = 1_700_000_000.0


def pool_class(ad: dict[str, Any]) -> int:
    """What ``ADVISOR_CLASS`` should give: the pool's fact, raised to ``AdvisorNeedsHours``."""
    needs = ad.get("AdvisorNeedsHours")
    raised = min(int(needs), PRIOR_HOURS_CLASSES - 1) if needs is not None else 0
    return max(pool_prior_class(ad), raised)


def job(proc: int, *, status: int = 1, **attrs: float) -> dict[str, Any]:
    return {"ClusterId": 7, "ProcId": proc, "JobStatus": status, "Owner": "alice", **attrs}


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"LastRemoteWallClockTime": 600.0},
        {"LastRemoteWallClockTime": 7300.0},
        {"LastRemoteWallClockTime": 200_000.0},
        {"AdvisorPriorHours": 5},
        {"AdvisorPriorHours": 5, "LastRemoteWallClockTime": 600.0},
        {"AdvisorPriorHours": 40},
        {"AdvisorPriorHours": 0, "LastRemoteWallClockTime": 7300.0},
        {"AdvisorNeedsHours": 23},
        {"AdvisorNeedsHours": 23, "AdvisorPriorHours": 5},
        {"AdvisorNeedsHours": 3, "AdvisorPriorHours": 5},
        {"AdvisorNeedsHours": 0, "LastRemoteWallClockTime": 7300.0},
        {"AdvisorNeedsHours": 40.5},
        {"AdvisorNeedsHours": -2, "LastRemoteWallClockTime": 600.0},
    ],
)
def test_pool_class_is_the_shipped_expression(attrs: dict[str, Any]) -> None:
    expression = classad2.ExprTree(expand("ADVISOR_CLASS", deploy_macros()))
    assert expression.eval(classad2.ClassAd(job(0, **attrs))) == pool_class(attrs)


def test_a_job_whose_longest_attempt_was_not_its_last_is_understated_until_edited() -> None:
    queue = QueueTracker()
    queue.record_attempt("7.0", 2 * 3600 + 5)  # a two-hour attempt, evicted ...
    queue.record_attempt("7.1", 2 * 3600 + 5)
    ads = [
        job(0, LastRemoteWallClockTime=600.0),  # ... then a ten-minute one
        job(1, status=2, LastRemoteWallClockTime=600.0),  # running: classed when idle again
        job(2, LastRemoteWallClockTime=7300.0),  # the pool already reads class 2
        job(3),  # never ran
    ]
    queue.update(ads, NOW)
    assert queue.understated == {"7.0": 2}
    ads[0]["AdvisorPriorHours"] = 2  # the sink's edit: the pool now agrees
    _, by_class = queue.update(ads, NOW + 60)
    assert queue.understated == {}
    assert by_class[2] == 2 and by_class[0] == 1


def test_a_class_raised_by_advice_is_not_taken_back_as_understated() -> None:
    """``AdvisorNeedsHours`` is a policy's, ``AdvisorPriorHours`` the pool's fact: a job raised
    to class 23 whose own class the pool reads right is left alone."""
    queue = QueueTracker()
    ads = [job(0, LastRemoteWallClockTime=600.0, AdvisorNeedsHours=23), job(1, AdvisorNeedsHours=0)]
    queue.update(ads, NOW)
    assert queue.understated == {}
    assert [pool_class(ad) for ad in ads] == [23, 0]
