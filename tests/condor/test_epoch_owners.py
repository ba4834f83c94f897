"""Epoch ads go to the schedd that ran the attempt: two schedds on one host share one epoch
history (their shadows have no local name), so the first's history returns the second's
attempts. The real pool runs two schedds so (tests/integration/test_real_pool_schedds.py)."""

from __future__ import annotations

from typing import Any

from advisor.condor.epoch_owners import KEPT_S, EpochOwners

A, B = "vm", "ap2@ap2.advisor.test"


def ad(schedd: str | None, cluster: int, written: float, run: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = {
        "ClusterId": cluster,
        "ProcId": 0,
        "RunInstanceID": run,
        "EpochWriteDate": written,
    }
    if schedd is not None:
        found["GlobalJobId"] = f"{schedd}#{cluster}.0#1796000000"
    return found


def clusters(routed: dict[str, list[Any]]) -> dict[str, list[int]]:
    return {name: [a["ClusterId"] for a in ads] for name, ads in routed.items()}


def test_each_ad_goes_to_the_schedd_its_global_job_id_names() -> None:
    shared = [ad(A, 1, 1000.0), ad(B, 1, 1001.0), ad(B, 2, 999.0), ad(None, 3, 1002.0)]
    routed = EpochOwners().route({A: shared, B: []})
    assert clusters(routed) == {A: [1, 3], B: [2, 1]}  # in write order; no GlobalJobId: reader's


def test_an_ad_of_a_schedd_not_read_stays_with_the_one_that_returned_it() -> None:
    """A configured name unlike the schedd's ``Name`` must not lose its attempts."""
    routed = EpochOwners().route({A: [ad("schedd@elsewhere", 5, 1000.0)], B: None})
    assert clusters(routed) == {A: [5], B: []}


def test_one_history_returned_by_both_schedds_reports_each_attempt_once() -> None:
    owners = EpochOwners()
    both = [ad(A, 1, 1000.0), ad(B, 1, 1000.0), ad(B, 1, 1100.0, run=1)]
    assert clusters(owners.route({A: both, B: both})) == {A: [1], B: [1, 1]}
    assert clusters(owners.route({A: both, B: both})) == {A: [], B: []}


def test_identities_are_kept_a_day_of_write_time() -> None:
    owners = EpochOwners()
    owners.route({A: [ad(A, 1, 1000.0)], B: []})
    owners.route({A: [ad(A, 2, 1000.0 + KEPT_S + 1)], B: []})
    assert list(owners.reported) == [f"{A}#{A}#2.0.0"]
