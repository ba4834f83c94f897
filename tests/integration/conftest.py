"""The real-pool fixture: a Debian sid chroot with minicondor 25, four execute machines.

Needs root (chroot, mounts) and Debian's mirrors the first time (the chroot is cached in
/var/cache/htcondor-advisor/chroot). Skips on a user's machine without root, fails under CI=true.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require

from integration.advice_server import AdviceServer
from integration.pool.pool import COLLECTOR, DEFAULT_CHROOT, ChrootPool, build_chroot


def wait_for(check: Callable[[], Any], timeout: float, what: str, every: float = 1.0) -> Any:
    """``check()``'s first truthy result within ``timeout`` seconds, else fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def startd_ads(projection: list[str]) -> dict[str, Any]:
    """Collector's startd ads by Machine (READ needs no authentication)."""
    import htcondor2

    collector = htcondor2.Collector(COLLECTOR)
    ads = collector.query(htcondor2.AdTypes.Startd, projection=["Machine", *projection])
    return {ad["Machine"]: ad for ad in ads}


def _pool_up(count: int) -> bool:
    """The startds and the schedd have advertised themselves."""
    import htcondor2

    try:
        htcondor2.Collector(COLLECTOR).locate(htcondor2.DaemonTypes.Schedd)
        return len(startd_ads(["Name"])) == count
    except Exception:  # still starting
        return False


@pytest.fixture(scope="session")
def advice_server() -> Iterator[AdviceServer]:
    server = AdviceServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def condor_pool(advice_server: AdviceServer) -> Iterator[ChrootPool]:
    require(os.geteuid() == 0, "the real-pool tests need root (chroot and mounts)")
    pool = ChrootPool(build_chroot(DEFAULT_CHROOT), hook_url=advice_server.url)
    pool.stop()  # leftovers of an interrupted run
    pool.start()
    try:
        wait_for(lambda: _pool_up(len(pool.names)), 90, "four startds")
        yield pool
    finally:
        pool.stop()
    assert pool.mounted() == [], "mounts left behind in the chroot"


@pytest.fixture
def idle_pool(condor_pool: ChrootPool, advice_server: AdviceServer) -> ChrootPool:
    """No jobs, no owners, no advice served; every machine Unclaimed."""
    advice_server.clear()
    condor_pool.run("condor_rm", "-all", check=False)
    for name in condor_pool.names:
        condor_pool.set_owner_schedule(name, [])

    def all_unclaimed() -> bool:
        states = startd_ads(["State"])
        return len(states) == 4 and all(ad["State"] == "Unclaimed" for ad in states.values())

    wait_for(all_unclaimed, 60, "every slot Unclaimed")
    return condor_pool


@pytest.fixture(scope="session")
def advisor_token(condor_pool: ChrootPool, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An IDTOKEN for the advisor's identity with READ and NEGOTIATOR (for MERGE_STARTD_AD)."""
    path = tmp_path_factory.mktemp("tokens") / "advisor.token"
    path.write_text(condor_pool.token("htcondor-advisor", "READ", "NEGOTIATOR"))
    path.chmod(0o600)
    return path
