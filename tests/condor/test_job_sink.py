"""The schedd sink's constraint, evaluated by the real classad2 on job ads: only the advised jobs,
only while idle, only of the owners the site named."""

from __future__ import annotations

import classad2

from advisor.condor.job_sink import idle_jobs_constraint, jobs_on


def selected(constraint: str, ads: list[dict[str, object]]) -> list[str]:
    expr = classad2.ExprTree(constraint)
    return [
        f"{ad['ClusterId']}.{ad['ProcId']}" for ad in ads if expr.eval(classad2.ClassAd(ad)) is True
    ]


ADS: list[dict[str, object]] = [
    {"ClusterId": 7, "ProcId": 0, "JobStatus": 1, "Owner": "alice"},
    {"ClusterId": 7, "ProcId": 1, "JobStatus": 2, "Owner": "alice"},  # running: never edited
    {"ClusterId": 7, "ProcId": 2, "JobStatus": 1, "Owner": "bob"},
    {"ClusterId": 71, "ProcId": 0, "JobStatus": 1, "Owner": "alice"},  # 71.0 is not 7.10
    {"ClusterId": 7, "ProcId": 10, "JobStatus": 1, "Owner": "alice"},
]


def test_only_the_advised_idle_jobs_are_selected() -> None:
    constraint = idle_jobs_constraint(["7.0", "7.1", "7.2", "7.10"], ())
    assert selected(constraint, ADS) == ["7.0", "7.2", "7.10"]


def test_only_the_named_owners_jobs_are_selected() -> None:
    constraint = idle_jobs_constraint(["7.0", "7.2", "71.0"], ("alice",))
    assert selected(constraint, ADS) == ["7.0", "71.0"]


def test_a_job_named_on_a_schedd_is_edited_there_only() -> None:
    advised = [("7.0@ap1.example.org", 5), ("7.0@ap2@cm.example.org", 6), ("8.0", 7)]
    assert jobs_on(advised, "ap1.example.org") == [("7.0", 5), ("8.0", 7)]
    assert jobs_on(advised, "ap2@cm.example.org") == [("7.0", 6), ("8.0", 7)]
