"""On the real pool: the daemon's advice reaches the startds through the shipped hook and
configuration, the negotiator through MERGE_STARTD_AD, and once the daemon is stopped its advice
expires and the pool runs as without it."""

from __future__ import annotations

import contextlib
import json
import math
import signal
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import classad2
import pytest

from advisor.condor.factory import build_condor_pool
from integration.conftest import (
    DaemonStarter,
    pool_state,
    running_job_ads,
    running_jobs,
    startd_ads,
    wait_for,
)
from integration.pool.pool import COLLECTOR, DOMAIN, PROJECT, ChrootPool, room_of
from integration.test_real_pool_events import job
from plugins.contract.advice import Advice, MachineAdvice

pytestmark = pytest.mark.integration


def machine(name: str) -> str:
    return f"{name}.{DOMAIN}"


def shipped_rank() -> str:
    """The ``rank`` line of deploy/jobs/advisor-rank.sub."""
    text = (PROJECT / "deploy/jobs/advisor-rank.sub").read_text()
    return next(line for line in text.splitlines() if line.startswith("rank "))


def test_daemon_advice_ranks_holds_and_expires(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    ranks = {"pc1": 1.0, "pc2": 0.5, "pc3": 5.0, "pc4": 9.0}
    options = {"ranks": ",".join(f"{machine(n)}={r}" for n, r in ranks.items())}
    options["hold"] = machine("pc4")
    daemon = start_daemon(
        tmp_path,
        {  # no token, no merge: what the collector shows came through the hook
            "policy": {"name": "fixed-advice", "options": options},
            "publish": {"advice_lifetime": "20s"},
        },
    )
    status, _, body = daemon.get(f"/advice/{machine('pc4')}")
    served = classad2.parseOne(body)
    assert status == 200 and served["AdvisorRank"] == 4.0 and served["AdvisorHold"] is True
    places = {"pc1": 2.0, "pc2": 1.0, "pc3": 3.0, "pc4": 4.0}  # the ranks' places in their order
    assert served["AdvisorPolicy"] == "fixed-advice/1"

    def hook_published() -> bool:
        ads = startd_ads(["AdvisorRank", "AdvisorPolicy"])
        return all(
            ads.get(machine(n), {}).get("AdvisorRank") == r
            and ads[machine(n)].get("AdvisorPolicy") == "fixed-advice/1"
            for n, r in places.items()
        )

    wait_for(hook_published, 30, "the daemon's Advisor* attributes in the collector")
    # each machine is in the room its startd advertises (AdvisorCluster, execute-point/50)
    rooms = {n: json.loads(daemon.get(f"/explain/{machine(n)}")[2])["cluster"] for n in ranks}
    assert rooms == {n: room_of(n) for n in ranks}
    # the highest-ranked slot is held: a job with the shipped Rank runs on the next best
    idle_pool.submit(job(300, 1, shipped_rank()))
    why = partial(pool_state, idle_pool)
    first = wait_for(running_jobs, 40, "the ranked job to start", explain=why)
    assert list(first.values()) == [machine("pc3")]
    # two more jobs fill pc1 and pc2; the third waits although pc4 is free: AdvisorHold
    idle_pool.submit(job(300, 3, shipped_rank()))
    three = wait_for(lambda: len(running_jobs()) == 3, 40, "three jobs running", explain=why)
    assert three
    time.sleep(8)  # several negotiation cycles
    running = running_jobs()
    assert sorted(running.values()) == [machine("pc1"), machine("pc2"), machine("pc3")]
    # the daemon stops: its last advice expires and the waiting job runs on pc4
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.finish(30) == 0
    stopped = time.time()
    assert "stopped; snapshot saved" in daemon.log()
    wait_for(lambda: len(running_jobs()) == 4, 90, "the held slot after expiry", explain=why)
    ad = startd_ads(["AdvisorHold", "AdvisorExpires"])[machine("pc4")]
    assert ad["AdvisorHold"] is True  # the hook's last lines stay in the ad, stale and ignored
    assert stopped < ad["AdvisorExpires"] <= stopped + 20  # the last advice's 20 s lifetime
    (on_pc4,) = [
        a for a in running_job_ads(["JobCurrentStartDate"]) if a["Machine"] == machine("pc4")
    ]
    assert on_pc4["JobCurrentStartDate"] >= math.floor(ad["AdvisorExpires"])  # not before expiry


def test_merged_advice_reaches_the_negotiator(
    idle_pool: ChrootPool, advisor_token: Path, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    config = {"collector": COLLECTOR, "token_file": str(advisor_token), "policy": "merged/1"}
    source, sinks = build_condor_pool(config)
    (merge,) = sinks
    source.poll(time.time())
    advice = Advice(machines={machine("pc2"): MachineAdvice(rank=3.0)})

    def policy_of_pc2() -> object:
        return startd_ads(["AdvisorPolicy"])[machine("pc2")].get("AdvisorPolicy")

    merge.publish(advice, time.time())
    assert wait_for(lambda: policy_of_pc2() == "merged/1", 10, "the merged attributes")
    # the startd's next update replaces its ad (merged attributes gone); the sink puts them back
    wait_for(lambda: policy_of_pc2() != "merged/1", 30, "the startd's next update")
    merge.publish(advice, time.time())
    assert wait_for(lambda: policy_of_pc2() == "merged/1", 10, "the re-merged attributes")
    # the daemon, on an address the hook does not ask, re-merges its advice every cycle: a job
    # requiring that (fresh) advice can only match through the merged ad, and runs on pc2
    start_daemon(
        tmp_path,
        {
            "pool": {"token_file": str(advisor_token)},
            "policy": {"name": "fixed-advice", "options": {"ranks": f"{machine('pc2')}=4"}},
        },
        listen="127.0.0.1:0",
    )
    wait_for(lambda: policy_of_pc2() == "fixed-advice/1", 10, "the daemon's merged attributes")
    idle_pool.submit(job(60, 1, "requirements = AdvisorRank =?= 1.0 && AdvisorExpires > time()"))
    placed = wait_for(running_jobs, 60, "the job to match on merged advice")
    assert list(placed.values()) == [machine("pc2")]


@contextlib.contextmanager
def site_post_job_rank(pool: ChrootPool, expression: str) -> Iterator[None]:
    """``NEGOTIATOR_POST_JOB_RANK`` as a site sets it, in a file read after the pool's own, for
    as long as the block runs (``condor_reconfig``; the running negotiator is asked for it)."""
    path = pool.host_path("/etc/condor/config.d/99-zz-site-post-job-rank.conf")

    def applied(value: str) -> Callable[[], bool]:
        ask = ("condor_config_val", "-negotiator", "NEGOTIATOR_POST_JOB_RANK")
        return lambda: pool.run(*ask, check=False).strip() == value

    default = pool.run("condor_config_val", "-negotiator", "NEGOTIATOR_POST_JOB_RANK").strip()
    path.write_text(f"NEGOTIATOR_POST_JOB_RANK = {expression}\n")
    try:
        pool.run("condor_reconfig", "-daemon", "negotiator")
        wait_for(applied(expression), 30, "the negotiator's new NEGOTIATOR_POST_JOB_RANK")
        yield
    finally:
        path.unlink()
        pool.run("condor_reconfig", "-daemon", "negotiator")
        wait_for(applied(default), 30, "the negotiator's NEGOTIATOR_POST_JOB_RANK again")


def test_ranks_that_the_negotiators_float_cannot_tell_apart_keep_their_order(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    # two idle periods ending a minute apart, as an idle policy ranks machines; weighted above
    # the site's order and rounded to a 32-bit float (EvalNegotiatorMatchRank) they are equal
    ranks = {"pc1": 1.7e9, "pc2": 1.7e9 + 60, "pc3": 5.0, "pc4": -1.0}
    options = {"ranks": ",".join(f"{machine(n)}={r!r}" for n, r in ranks.items())}
    # a site's own tie-break that prefers pc1: equal ranks would start the job there
    with site_post_job_rank(idle_pool, f'(Machine == "{machine("pc1")}")'):
        start_daemon(tmp_path, {"policy": {"name": "fixed-advice", "options": options}})
        places = {"pc1": 2.0, "pc2": 3.0, "pc3": 1.0, "pc4": -1.0}

        def hook_published() -> bool:
            ads = startd_ads(["AdvisorRank"])
            return all(ads.get(machine(n), {}).get("AdvisorRank") == p for n, p in places.items())

        wait_for(hook_published, 30, "the ranks' places in the collector")
        idle_pool.submit(job(300, 1))
        why = partial(pool_state, idle_pool)
        placed = wait_for(running_jobs, 40, "the job to start", explain=why)
    assert list(placed.values()) == [machine("pc2")]
