"""The real-pool fixture: a Debian sid chroot with minicondor 25, four execute machines.

Needs root (chroot, mounts) and Debian's mirrors the first time (the chroot is cached in
/var/cache/htcondor-advisor/chroot). Skips on a user's machine without root, fails under CI=true.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from conftest import require

from advisor.lab.daemon_process import DaemonProcess
from integration.pool.pool import (
    COLLECTOR,
    DEFAULT_CHROOT,
    SECOND_SCHEDD,
    ChrootPool,
    build_chroot,
)
from integration.pool.waiting import wait_for
from plugins.contract.job_ids import on_schedd

TEST_POLICIES = Path(__file__).resolve().parent / "policies"
"""``fixed-advice``, registered through the dist-info there (on the daemon's PYTHONPATH)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


ADVISOR_LISTEN = f"127.0.0.1:{_free_port()}"
"""Where the daemon under test listens; the pool's hook asks there from the start."""


def pool_state(pool: ChrootPool) -> str:
    """Each slot's state and activity, each idle job's matches and last rejection, and the
    negotiator's last lines: what a timeout waiting for jobs to start needs to be read."""
    slots = [
        f"{m}: {ad['State']}/{ad['Activity']}"
        for m, ad in sorted(startd_ads(["State", "Activity"]).items())
    ]
    idle = pool.run(
        "condor_q",
        "-allusers",
        "-constraint",
        "JobStatus == 1",
        "-af:j",
        "NumJobMatches",
        "LastRejMatchReason",
        check=False,
    )
    log = pool.host_path("/var/log/condor/NegotiatorLog")
    tail = log.read_text(errors="replace").splitlines()[-20:] if log.exists() else []
    return "\n".join(
        [
            "slots:",
            *slots,
            "idle jobs (matches, last rejection):",
            idle.strip(),
            "negotiator:",
            *tail,
        ]
    )


def startd_ads(projection: list[str]) -> dict[str, Any]:
    """Collector's startd ads by Machine (READ needs no authentication)."""
    import htcondor2

    collector = htcondor2.Collector(COLLECTOR)
    ads = collector.query(htcondor2.AdTypes.Startd, projection=["Machine", *projection])
    return {ad["Machine"]: ad for ad in ads}


def running_job_ads(projection: list[str]) -> list[Any]:
    """The schedd's ads of running jobs, with ``Machine`` (from ``RemoteHost``) added.

    A job is ``JobStatus == 2`` a moment before the shadow sets its ``RemoteHost``: such a job
    is not counted yet.
    """
    import htcondor2

    located = htcondor2.Collector(COLLECTOR).locate(htcondor2.DaemonTypes.Schedd, first_schedd())
    schedd = htcondor2.Schedd(located)
    ads = schedd.query("JobStatus == 2 && RemoteHost =!= undefined", ["RemoteHost", *projection])
    for ad in ads:
        ad["Machine"] = ad["RemoteHost"].split("@")[1]
    return list(ads)


def first_schedd() -> str:
    """The ``Name`` of the test pool's first schedd, where ``ChrootPool.submit`` submits."""
    import htcondor2

    ads = htcondor2.Collector(COLLECTOR).query(htcondor2.AdTypes.Schedd, projection=["Name"])
    (name,) = [str(ad["Name"]) for ad in ads if ad["Name"] != SECOND_SCHEDD]
    return name


def job_on_schedd(ad: Any) -> str:
    """A job ad's id as the daemon names it (``cluster.proc@schedd``; ``GlobalJobId`` is
    ``schedd#cluster.proc#qdate``)."""
    return on_schedd(f"{ad['ClusterId']}.{ad['ProcId']}", ad["GlobalJobId"].split("#")[0])


def running_jobs() -> dict[str, str]:
    """Running jobs by id (as the daemon names them) -> machine, from the schedd."""
    ads = running_job_ads(["ClusterId", "ProcId", "GlobalJobId"])
    return {job_on_schedd(a): a["Machine"] for a in ads}


def _pool_up(count: int) -> bool:
    """The startds and both schedds have advertised themselves."""
    import htcondor2

    try:
        htcondor2.Collector(COLLECTOR).locate(htcondor2.DaemonTypes.Schedd, first_schedd())
        htcondor2.Collector(COLLECTOR).locate(htcondor2.DaemonTypes.Schedd, SECOND_SCHEDD)
        return len(startd_ads(["Name"])) == count
    except Exception:  # still starting
        return False


@pytest.fixture(scope="session")
def condor_pool() -> Iterator[ChrootPool]:
    require(os.geteuid() == 0, "the real-pool tests need root (chroot and mounts)")
    pool = ChrootPool(build_chroot(DEFAULT_CHROOT), hook_url=f"http://{ADVISOR_LISTEN}")
    pool.stop()  # leftovers of an interrupted run
    pool.start()
    try:
        wait_for(lambda: _pool_up(len(pool.names)), 90, "four startds")
        yield pool
    finally:
        pool.stop()
    assert pool.mounted() == [], "mounts left behind in the chroot"


@pytest.fixture
def idle_pool(condor_pool: ChrootPool) -> ChrootPool:
    """No jobs, no owners, no daemon (so no advice served); every machine Unclaimed and Idle."""
    condor_pool.run("condor_rm", "-all", check=False)
    for name in condor_pool.names:
        condor_pool.set_owner_schedule(name, [])

    def all_unclaimed() -> bool:  # (Unclaimed/Benchmarking at a startd's start is not ready)
        states = startd_ads(["State", "Activity"])
        ready = [ad["State"] == "Unclaimed" and ad["Activity"] == "Idle" for ad in states.values()]
        return len(states) == 4 and all(ready)

    wait_for(all_unclaimed, 60, "every slot Unclaimed and Idle")
    return condor_pool


@pytest.fixture(scope="session")
def advisor_token(condor_pool: ChrootPool, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An IDTOKEN for the advisor's identity with READ and NEGOTIATOR (for MERGE_STARTD_AD)."""
    path = tmp_path_factory.mktemp("tokens") / "advisor.token"
    path.write_text(condor_pool.token("htcondor-advisor", "READ", "NEGOTIATOR"))
    path.chmod(0o600)
    return path


DaemonStarter = Callable[..., DaemonProcess]
SETTLES_S = 15
"""``pool.collector_settles_s`` for the test pools: their daemons send their ads every 5 s."""


@pytest.fixture
def start_daemon(monkeypatch: pytest.MonkeyPatch) -> Iterator[DaemonStarter]:
    """``htcondor-advisor run --config`` as a child process on ``ADVISOR_LISTEN``, watching the
    test pool (kind condor) with ``extra`` configuration sections; SIGTERM at teardown. Another
    ``listen`` address hides the daemon from the pool's hook (only its collector merge counts)."""
    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join(filter(None, [str(TEST_POLICIES), os.environ.get("PYTHONPATH")])),
    )
    started: list[DaemonProcess] = []

    def start(
        directory: Path, extra: dict[str, Any], listen: str = ADVISOR_LISTEN
    ) -> DaemonProcess:
        config: dict[str, dict[str, Any]] = {
            "pool": {  # (the test pool's daemons send their ads every 5 s at most)
                "kind": "condor",
                "collector": COLLECTOR,
                "active_idle_s": 0,
                "collector_settles_s": SETTLES_S,
            },
            "publish": {"listen": ADVISOR_LISTEN, "interval": "2s"},
            "learning": {"observe_interval": "2s"},
            "state": {"directory": str(directory / "state"), "snapshot_interval": "2s"},
            "logging": {"level": "INFO"},
        }
        for section, values in extra.items():
            config[section] = {**config.get(section, {}), **values}
        path = directory / "advisor.yaml"
        path.write_text(yaml.safe_dump(config))
        return listening(DaemonProcess(["--config", str(path), "--listen", listen]), started)

    yield start
    stop_all(started)


D = TypeVar("D", bound=DaemonProcess)


def listening(daemon: D, started: list[D]) -> D:
    """``daemon`` once its endpoint listens, kept in ``started`` for the teardown."""
    started.append(daemon)
    daemon.wait_for(lambda: "listening on" in daemon.log(), 60)
    return daemon


def stop_all(started: Sequence[DaemonProcess]) -> None:
    """SIGTERM every daemon still running, and wait for it (a fixture's teardown)."""
    for daemon in started:
        if daemon.proc.poll() is None:
            daemon.proc.send_signal(signal.SIGTERM)
            daemon.finish(30)
