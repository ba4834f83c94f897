"""On the real pool's two schedds, each numbering its clusters from 1: a job of one and the job
with the same ``cluster.proc`` of the other reach the policies as two jobs, and advice for one
is edited on its own schedd only (plugins/contract/job_ids.py). Before, the daemon named both
``cluster.proc``: the policies took them for one job, and a hold advised for one held both."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from advisor.condor.factory import build_condor_pool
from advisor.condor.job_sink import ScheddJobSink
from integration.conftest import first_schedd, wait_for
from integration.pool.pool import COLLECTOR, DOMAIN, SECOND_SCHEDD, ChrootPool
from integration.test_real_pool_removals import SLEEP
from plugins.contract.advice import Advice, JobAdvice
from plugins.contract.events import AttemptEnded, AttemptStarted, Event, JobQueued
from plugins.contract.job_ids import on_schedd

pytestmark = pytest.mark.integration
HELD = "executable = /bin/true\nhold = true\nqueue 1\n"
TARGETS = ("", SECOND_SCHEDD)
"""What condor_submit, condor_q and condor_rm are given for each schedd (-name; none: the
first, whose name is the host's, which the tools would look up as a host)."""


def cluster_of(out: str) -> int:
    return int(out.split("submitted to cluster ")[1].split(".")[0])


def same_next_cluster(pool: ChrootPool) -> int:
    """Submits held clusters to the schedd behind until both number their next cluster alike;
    that number."""
    probes = [cluster_of(pool.submit(HELD, t)) for t in TARGETS]
    behind, ahead = sorted(zip(probes, TARGETS, strict=True))
    assert ahead[0] - behind[0] < 500, probes
    for _ in range(ahead[0] - behind[0]):
        pool.submit(HELD, behind[1])
    for target in TARGETS:
        pool.run("condor_rm", *named(target), "-all", check=False)
    return ahead[0] + 1


def named(target: str) -> list[str]:
    return ["-name", target] if target else []


def test_one_job_id_on_two_schedds_is_two_jobs(idle_pool: ChrootPool) -> None:
    schedds = (first_schedd(), SECOND_SCHEDD)
    cluster = same_next_cluster(idle_pool)
    source, _ = build_condor_pool({"collector": COLLECTOR, "active_idle_s": 0})
    source.poll(time.time())
    short = SLEEP.replace("600", "3") + "queue 1\n"
    assert [cluster_of(idle_pool.submit(short, t)) for t in TARGETS] == [cluster, cluster]
    events: list[Event] = []

    def both_ended() -> bool:
        events.extend(source.poll(time.time()).events)
        return sum(isinstance(e, AttemptEnded) for e in events) >= 2

    wait_for(both_ended, 90, "both jobs ended")
    jobs = {on_schedd(f"{cluster}.0", name) for name in schedds}
    for kind in (JobQueued, AttemptStarted, AttemptEnded):
        assert sorted(e.job_id for e in events if isinstance(e, kind)) == sorted(jobs), kind


def test_advice_for_one_of_them_is_edited_on_its_schedd_only(
    idle_pool: ChrootPool, tmp_path: Path
) -> None:
    cluster = same_next_cluster(idle_pool)
    waiting = f"{SLEEP}requirements = false\nqueue 1\n"
    assert [cluster_of(idle_pool.submit(waiting, t)) for t in TARGETS] == [cluster, cluster]
    token = tmp_path / "tokens.d/advisor"
    token.parent.mkdir()
    token.write_text(idle_pool.token("htcondor-advisor", "READ", "WRITE"))
    token.chmod(0o600)
    for target in TARGETS:  # its user record on each schedd (deploy/TOKENS.md)
        idle_pool.run("condor_qusers", *named(target), "-add", f"htcondor-advisor@{DOMAIN}")
    config = {"collector": COLLECTOR, "token_file": str(token), "merge": False, "edit_jobs": True}
    _, sinks = build_condor_pool(config)
    (sink,) = [s for s in sinks if isinstance(s, ScheddJobSink)]
    until = int(time.time()) + 3600
    advice = Advice(jobs={on_schedd(f"{cluster}.0", SECOND_SCHEDD): JobAdvice(hold_until=until)})
    sink.publish(advice, time.time())

    def held_until(target: str) -> str:
        # this cluster only: the probes same_next_cluster removed may still be leaving the queue
        query = ["condor_q", *named(target), "-allusers", str(cluster), "-af", "AdvisorHoldUntil"]
        return idle_pool.run(*query).strip()

    assert [held_until(t) for t in TARGETS] == ["undefined", str(until)]
