"""The shipped control-group split, evaluated by the real classad2: the bucket the expressions
compute from ClusterId and ProcId is the one plugins/contract/control.py computes, for many jobs
(and near the 64-bit edges the arithmetic must not cross); the share is the knob's; a control
job passes a held machine's START with a neutral rank, a treated job does not; with fresh advice
each arm starts only on its own machines, and on any once the advice lapsed."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from advisor.condor.attributes import advice_attributes
from condor.test_deploy_expressions import candidate_ads, deploy_macros, expand
from plugins.contract.advice import MachineAdvice
from plugins.contract.control import CONTROL, arm_of, control_bucket
from plugins.contract.machine_split import CONTROL_MACHINE, TREATED_MACHINE

PAIRS = (
    [(c, 0) for c in range(1, 1500)]
    + [(4711, p) for p in range(1000)]
    + [(c, p) for c in range(20_000, 20_100) for p in range(10)]
    + [(2**31 - 2, 0), (2**31 - 1, 5), (2**31, 2**31 - 1), (2**40, 2**31 + 7)]
)


def bucket_of(cluster: int, proc: int, macros: dict[str, str]) -> Any:
    import classad2

    job = classad2.ClassAd({"ClusterId": cluster, "ProcId": proc})
    return classad2.ExprTree(expand("ADVISOR_CONTROL_BUCKET", macros)).eval(job)


def test_the_expression_and_python_give_every_job_the_same_bucket() -> None:
    macros = deploy_macros()
    rng = random.Random(26)
    pairs = PAIRS + [(rng.randrange(1, 10**7), rng.randrange(0, 10**4)) for _ in range(2000)]
    wrong = [(c, p) for c, p in pairs if bucket_of(c, p, macros) != control_bucket(c, p)]
    assert not wrong, wrong[:5]
    assert all(0 <= control_bucket(c, p) < 100 for c, p in pairs)


def test_the_share_is_the_knob_and_stable() -> None:
    assert deploy_macros()["ADVISOR_CONTROL_PERCENT"] == "10"  # the example deployment
    ids = [f"{c}.{p}" for c in range(1, 20_001) for p in range(5)]
    for percent in (5, 10, 30):
        share = sum(arm_of(i, percent) == CONTROL for i in ids) / len(ids)
        assert abs(share - percent / 100) < 0.005, (percent, share)
    # one cluster of many processes, and single-process clusters taken in turn by nine users
    assert abs(sum(control_bucket(77, p) < 10 for p in range(50_000)) / 50_000 - 0.1) < 0.005
    for user in range(9):
        clusters = range(1 + user, 90_000, 9)
        share = sum(control_bucket(c, 0) < 10 for c in clusters) / len(clusters)
        assert abs(share - 0.1) < 0.01, (user, share)
    # stable across versions: a job keeps its arm when the daemon is upgraded mid-experiment
    pairs = [(1, 0), (2, 0), (3, 1), (77, 5), (123456, 0), (2**31, 3), (99999999, 42)]
    assert [control_bucket(c, p) for c, p in pairs] == [43, 25, 38, 48, 93, 28, 89]
    assert arm_of("1.0#r1", 100) == arm_of("lab-job", 100) == "treated"  # no HTCondor numbers
    assert arm_of("12", 10) == arm_of("12.0", 10)


def evaluate(
    ad: dict[str, Any],
    name: str,
    advice: MachineAdvice,
    cluster: int,
    pct: int,
    expires_in: float = 600,
    waited: float | None = None,
) -> Any:
    """``name`` for a job of ``cluster``; with ``waited``, one idle that long, under the shipped
    bound (else the control group alone: test_wait_bound_expressions.py has the bound)."""
    import classad2

    now = time.time()
    bound = {} if waited is not None else {"ADVISOR_WAIT_BOUND": "0"}
    macros = {**deploy_macros(), "ADVISOR_CONTROL_PERCENT": str(pct), **bound}
    machine = classad2.ClassAd(ad)  # a real startd ad: an unscoped name falls through to the job
    for key, value in advice_attributes(advice, now - 700, now + expires_in, "t/1").items():
        machine[key] = value
    job = classad2.ClassAd({"ClusterId": cluster, "ProcId": 0, "QDate": int(now - 60)})
    if waited is not None:
        job["EnteredCurrentStatus"] = int(now - waited)
    return classad2.ExprTree(expand(name, macros)).eval(machine, job)


@pytest.mark.realdata
def test_control_jobs_are_matched_as_without_advice(shared_data: Path) -> None:
    ad = dict(candidate_ads(shared_data, 1)[0])
    control = next(c for c in range(1, 100) if control_bucket(c, 0) < 10)
    treated = next(c for c in range(1, 100) if control_bucket(c, 0) >= 10)
    kept_off = MachineAdvice(rank=5.0, rank_by_prior_hours=(-1.0,) * 24)
    for advice in (MachineAdvice(hold=True), kept_off):
        assert evaluate(ad, "ADVISOR_ALLOWS", advice, control, 10) is True
        assert evaluate(ad, "ADVISOR_RANK", advice, control, 10) == 0.0
        assert evaluate(ad, "ADVISOR_ALLOWS", advice, treated, 10) is False
        assert evaluate(ad, "ADVISOR_ALLOWS", advice, control, 0) is False  # no control group
    ranked = MachineAdvice(rank=2.0)
    assert evaluate(ad, "ADVISOR_RANK", ranked, treated, 10) == 2.0
    assert evaluate(ad, "ADVISOR_RANK", ranked, control, 10) == 0.0
    held = MachineAdvice(hold=True)
    assert evaluate(ad, "NEGOTIATOR_SLOT_CONSTRAINT", held, treated, 10) is True  # control may
    assert evaluate(ad, "NEGOTIATOR_SLOT_CONSTRAINT", held, treated, 0) is False


@pytest.mark.realdata
def test_each_arm_starts_only_on_its_own_machines_while_the_advice_is_fresh(
    shared_data: Path,
) -> None:
    ad = dict(candidate_ads(shared_data, 1)[0])
    control = next(c for c in range(1, 100) if control_bucket(c, 0) < 10)
    treated = next(c for c in range(1, 100) if control_bucket(c, 0) >= 10)
    ranked = MachineAdvice(rank=3.0, arm="treated")  # a treated machine the policy advised
    allowed = {
        (machine, job): evaluate(ad, "ADVISOR_ALLOWS", advice, cluster, 10)
        for machine, advice in (("control", CONTROL_MACHINE), ("treated", TREATED_MACHINE))
        for job, cluster in (("control", control), ("treated", treated))
    }
    assert allowed == {
        ("control", "control"): True,
        ("control", "treated"): False,
        ("treated", "control"): False,
        ("treated", "treated"): True,
    }
    assert evaluate(ad, "ADVISOR_ALLOWS", ranked, control, 10) is False
    assert evaluate(ad, "ADVISOR_ALLOWS", ranked, treated, 10) is True
    assert evaluate(ad, "ADVISOR_RANK", ranked, treated, 10) == 3.0
    for advice in (CONTROL_MACHINE, TREATED_MACHINE, ranked):  # lapsed: as without the advisor
        for cluster in (control, treated):
            assert evaluate(ad, "ADVISOR_ALLOWS", advice, cluster, 10, expires_in=-5) is True
    # without a split (no AdvisorControl) a control job may take any machine
    assert evaluate(ad, "ADVISOR_ALLOWS", MachineAdvice(rank=3.0), control, 10) is True


@pytest.mark.realdata
def test_a_job_past_the_starvation_bound_may_take_the_other_arms_machines(
    shared_data: Path,
) -> None:
    """A job that only the other arm's machines can run (a GPU job whose arm has no GPU) would
    wait as long as the advice is fresh: past the bound it is matched as without the advisor."""
    ad = dict(candidate_ads(shared_data, 1)[0])
    control = next(c for c in range(1, 100) if control_bucket(c, 0) < 10)
    treated = next(c for c in range(1, 100) if control_bucket(c, 0) >= 10)
    day = float(deploy_macros()["ADVISOR_WAIT_BOUND"])
    for machine, job in ((TREATED_MACHINE, control), (CONTROL_MACHINE, treated)):
        assert evaluate(ad, "ADVISOR_ALLOWS", machine, job, 10, waited=day - 60) is False
        assert evaluate(ad, "ADVISOR_ALLOWS", machine, job, 10, waited=day + 60) is True
