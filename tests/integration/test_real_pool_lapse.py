"""On the real pool: when the advisor loses the pool, its advice lapses within the staleness
bound plus the advice lifetime, and the pool then matches jobs exactly as without it.

Two ways to lose the pool: the collector stops (the daemon must notice, stop renewing, say so
on ``/healthz`` and ``/metrics``, and recover when the collector returns), and the advisor is cut
off while the pool keeps running (then held jobs must start once the last advice expires).
"""

from __future__ import annotations

import json
import math
import time
from functools import partial
from pathlib import Path

import pytest

from advisor.lab.daemon_process import DaemonProcess
from integration.conftest import (
    DaemonStarter,
    _pool_up,
    pool_state,
    running_job_ads,
    running_jobs,
    startd_ads,
    wait_for,
)
from integration.pool.pool import DOMAIN, ChrootPool
from integration.relay import Relay
from integration.test_real_pool_events import job
from integration.test_real_pool_policies import metric

pytestmark = pytest.mark.integration

STALE_S, LIFETIME_S, INTERVAL_S = 6.0, 10.0, 2.0
BOUND_S = STALE_S + LIFETIME_S + INTERVAL_S
"""The last renewal comes at most one publish interval after the last confirmed view."""
MACHINES = [f"pc{i}.{DOMAIN}" for i in range(1, 5)]


def holding_daemon(
    start: DaemonStarter, directory: Path, collector: str | None = None, **pool: object
) -> DaemonProcess:
    """fixed-advice holding every machine, served where the pool's hook asks (``pool``: more
    of its ``pool`` section)."""
    if collector is not None:
        pool["collector"] = collector
    return start(
        directory,
        {
            "pool": pool,
            "policy": {
                "name": "fixed-advice",
                "options": {
                    "ranks": ",".join(f"{m}=1" for m in MACHINES),
                    "hold": ",".join(MACHINES),
                },
            },
            "publish": {
                "advice_lifetime": f"{LIFETIME_S:.0f}s",
                "stale_after": f"{STALE_S:.0f}s",
                "interval": f"{INTERVAL_S:.0f}s",
            },
        },
    )


def held_everywhere() -> bool:
    ads = startd_ads(["AdvisorHold", "AdvisorExpires"])
    return len(ads) == 4 and all(
        ad.get("AdvisorHold") is True and ad.get("AdvisorExpires", 0) > time.time()
        for ad in ads.values()
    )


def test_collector_stopped_advice_lapses_and_recovers(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    daemon = holding_daemon(start_daemon, tmp_path)
    wait_for(held_everywhere, 40, "the holds published through the hook")
    stopped = time.time()
    idle_pool.run("condor_off", "-daemon", "COLLECTOR")
    try:
        wait_for(lambda: daemon.get(f"/advice/{MACHINES[0]}")[2] == "", 60, "the lapse", 0.2)
        lapsed = time.time() - stopped
        health = json.loads(daemon.get("/healthz")[2])
        text = daemon.get("/metrics")[2]
        assert lapsed <= BOUND_S + 1.0, f"advice served {lapsed:.1f} s after the collector stopped"
        assert health["status"].startswith("stale") and health["advice_renewed"] is False
        assert metric(text, "advisor_advice_stale") == 1.0
        assert metric(text, "advisor_pool_healthy") == 0.0
        assert json.loads(daemon.get("/advice")[2])["machines"] == {}
    finally:
        idle_pool.run("condor_on", "-daemon", "COLLECTOR")
    print(f"\ncollector stopped: advice lapsed on the endpoint after {lapsed:.1f} s")
    wait_for(
        lambda: json.loads(daemon.get("/healthz")[2])["status"] == "ok", 90, "the daemon to recover"
    )
    wait_for(lambda: daemon.get(f"/advice/{MACHINES[0]}")[2] != "", 30, "advice served again")
    assert "Traceback" not in daemon.log()
    wait_for(lambda: _pool_up(4), 60, "every startd back in the collector")


def test_advisor_cut_off_from_the_pool_its_held_jobs_start_as_without_it(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    relay = Relay(("127.0.0.1", 9618))
    try:
        daemon = holding_daemon(start_daemon, tmp_path, f"127.0.0.1:{relay.port}")
        wait_for(held_everywhere, 40, "the holds published through the hook")
        idle_pool.submit(job(300, 4))
        time.sleep(8)  # several negotiation cycles: the holds keep every job idle
        assert running_jobs() == {}
        cut = time.time()
        relay.stop()  # the pool runs on; the advisor sees nothing of it any more
        why = partial(pool_state, idle_pool)
        wait_for(
            lambda: len(running_jobs()) == 4,
            90,
            "the four jobs after the advice lapsed",
            explain=why,
        )
    finally:
        relay.stop()
    health = json.loads(daemon.get("/healthz")[2])
    assert health["status"].startswith("stale")
    expires = {m: ad["AdvisorExpires"] for m, ad in startd_ads(["AdvisorExpires"]).items()}
    starts = {
        a["Machine"]: a["JobCurrentStartDate"] for a in running_job_ads(["JobCurrentStartDate"])
    }
    assert sorted(starts) == MACHINES  # one job per machine, as the pool does without advice
    for machine, started in starts.items():
        assert started >= math.floor(expires[machine])  # never before the last advice expired
        assert expires[machine] <= cut + BOUND_S  # and that advice was the last renewal's
    print(
        "\nadvisor cut off: last advice expired "
        f"{max(expires.values()) - cut:.1f} s after the cut, "
        f"jobs started {min(starts.values()) - cut:.0f}-{max(starts.values()) - cut:.0f} s after it"
    )
