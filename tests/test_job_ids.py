"""Job ids of several schedds stay apart, and a job's control arm does not depend on which
schedd it is on (the shipped expression sees only ``ClusterId`` and ``ProcId``)."""

from __future__ import annotations

from plugins.contract.control import arm_of, job_numbers
from plugins.contract.job_ids import batch_of, on_schedd, split_schedd


def test_a_batch_is_a_cluster_on_its_schedd() -> None:
    assert batch_of("12.3") == "12"
    assert batch_of("12.3#r1") == "12"
    assert batch_of(on_schedd("12.3", "ap1.example.org")) == "12@ap1.example.org"
    assert batch_of(on_schedd("12.3", "ap2@cm.example.org")) == "12@ap2@cm.example.org"
    assert batch_of("12.3@ap1.example.org") != batch_of("12.4@ap2.example.org")


def test_a_job_id_names_its_schedd_and_keeps_its_numbers() -> None:
    job = on_schedd("12.3", "ap2@cm.example.org")
    assert split_schedd(job) == ("12.3", "ap2@cm.example.org")
    assert split_schedd("12.3") == ("12.3", "")
    assert job_numbers(job) == (12, 3)
    for cluster in range(1, 300):
        plain = f"{cluster}.{cluster % 7}"
        assert arm_of(on_schedd(plain, "ap1.example.org"), 10) == arm_of(plain, 10)
