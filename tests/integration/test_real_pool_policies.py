"""On the real pool: every registered policy that is not an oracle runs live in the real daemon.

One run serves every policy at once (one daemon process each, on addresses the pool's hook does
not ask, so none steers the pool): the daemons start before a machine exists, that machine
appears, jobs complete and one is evicted by its owner. Each daemon must keep cycling, learn
the machines, hand the attempt outcomes (the learning signal) to its policy, answer on its
endpoint and stop cleanly with a snapshot.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
import yaml

from advisor.cli import main
from advisor.lab.daemon_process import DaemonProcess
from integration.conftest import TEST_POLICIES, pool_state, running_job_ads, startd_ads, wait_for
from integration.pool.pool import COLLECTOR, DOMAIN, ChrootPool
from integration.test_real_pool_events import job
from plugins.bandits.placement import PlacementBandit
from plugins.contract.events import AttemptEnded
from plugins.contract.registry import available, policy_class
from plugins.power.base import PowerPolicy

pytestmark = pytest.mark.integration

LIVE = sorted(n for n, cls in available().items() if not cls.NEEDS_ORACLE and n != "fixed-advice")
LATE = "pc4"
"""The machine that appears only after every daemon has started."""


@dataclass
class LiveRun:
    daemons: dict[str, DaemonProcess]
    metrics: dict[str, str]
    health: dict[str, dict]
    advice: dict[str, dict]
    snapshots: dict[str, dict]
    codes: dict[str, int]
    seconds: float
    dirs: dict[str, Path]


def metric(text: str, name: str, **labels: str) -> float:
    """One sample of a Prometheus exposition (0 when absent)."""
    label = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = re.escape(name + (f"{{{label}}}" if label else "")) + r" (\S+)"
    found = re.search(rf"^{pattern}$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def _config(directory: Path, policy: str) -> Path:
    config = {
        "pool": {"kind": "condor", "collector": COLLECTOR, "active_idle_s": 0, "merge": False},
        "policy": {"name": policy, "options": {"agent": "nasa"} if policy == "or-ppo" else {}},
        "publish": {"interval": "2s", "advice_lifetime": "30s", "stale_after": "20s"},
        "learning": {"observe_interval": "2s"},
        "state": {"directory": str(directory / "state"), "snapshot_interval": "5s"},
        "logging": {"level": "INFO"},
    }
    path = directory / "advisor.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _newest_snapshot(directory: Path) -> dict:
    newest = sorted((directory / "state").glob("snapshot-*.json"))[-1]
    return json.loads(newest.read_text())["state"]


@pytest.fixture(scope="module")
def live_run(
    condor_pool: ChrootPool, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveRun]:
    pool = condor_pool
    pool.run("condor_rm", "-all", check=False)
    for name in pool.names:
        pool.set_owner_schedule(name, [])
    pool.run("condor_off", "-daemon", f"STARTD_{LATE.upper()}")
    wait_for(lambda: f"{LATE}.{DOMAIN}" not in startd_ads(["Name"]), 60, f"{LATE} gone")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(TEST_POLICIES), os.environ.get("PYTHONPATH")])
    )
    base = tmp_path_factory.mktemp("live")
    dirs = {name: base / name for name in LIVE}
    daemons = {}
    for name, directory in dirs.items():
        directory.mkdir()
        daemons[name] = DaemonProcess(["--config", str(_config(directory, name))])
    started = time.monotonic()
    try:
        for daemon in daemons.values():

            def address(d: DaemonProcess = daemon) -> str | None:
                return d.address

            daemon.wait_for(address, 120)
        pool.run("condor_on", "-daemon", f"STARTD_{LATE.upper()}")
        pool.submit(job(3, 6))
        pool.submit(job(600, 1))
        long_runs = wait_for(
            _running_long, 90, "the long job to start", explain=partial(pool_state, pool)
        )
        victim = long_runs[0].split(".")[0]
        now = time.time()
        pool.set_owner_schedule(victim, [(now, now + 20)])  # the owner logs in: eviction

        def all_learned() -> bool:
            texts = {n: d.get("/metrics")[2] for n, d in daemons.items()}
            return all(
                metric(t, "advisor_attempt_outcomes_total", outcome="completed") >= 1
                and metric(t, "advisor_attempt_outcomes_total", outcome="evicted-owner") >= 1
                for t in texts.values()
            )

        wait_for(all_learned, 180, "every daemon to see a completion and an eviction", every=2)
        time.sleep(6)  # a few more cycles on what they learned
        metrics = {n: d.get("/metrics")[2] for n, d in daemons.items()}
        health = {n: json.loads(d.get("/healthz")[2]) for n, d in daemons.items()}
        advice = {n: json.loads(d.get("/advice")[2]) for n, d in daemons.items()}
        seconds = time.monotonic() - started
        for daemon in daemons.values():
            daemon.proc.send_signal(signal.SIGTERM)
        codes = {n: d.finish(60) for n, d in daemons.items()}
        snapshots = {n: _newest_snapshot(dirs[n]) for n in LIVE}
        yield LiveRun(daemons, metrics, health, advice, snapshots, codes, seconds, dirs)
    finally:
        for daemon in daemons.values():
            if daemon.proc.poll() is None:
                daemon.proc.kill()
        pool.run("condor_on", "-daemon", f"STARTD_{LATE.upper()}", check=False)
        pool.run("condor_rm", "-all", check=False)
        for name in pool.names:
            pool.set_owner_schedule(name, [])


def test_a_restarted_idle_policy_learns_its_owner_history_again(
    live_run: LiveRun, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its snapshot keeps no owner sessions (a year has millions); the journal does, and a
    restart feeds them again up to where the snapshot stood (advisor/lab/relearn.py)."""
    directory = live_run.dirs["idle-min"]
    known = {m["name"] for m in live_run.snapshots["idle-min"]["machines"]}
    kinds = {"OwnerSessionStarted", "OwnerSessionEnded", "MachinePowerChanged"}
    lines = (directory / "state" / "condor-journal" / "events.jsonl").read_text().splitlines()
    journaled = [json.loads(line) for line in lines]
    owners = [e for e in journaled if e["kind"] in kinds and e["machine"] in known]
    assert any(e["kind"] == "OwnerSessionStarted" for e in owners), "the victim's owner"
    with caplog.at_level("INFO", logger="htcondor_advisor"):
        assert main(["run", "--config", str(directory / "advisor.yaml"), "--once"]) == 0
    capsys.readouterr()
    assert f"idle-min/1 learned {len(owners)} events again from the journal" in caplog.text


def _running_long() -> list[str]:
    """Machines running the 600 s job."""
    return [a["Machine"] for a in running_job_ads(["Args"]) if a.get("Args") == "600"]


@pytest.mark.parametrize("name", LIVE)
def test_policy_runs_live_learns_and_serves(live_run: LiveRun, name: str) -> None:
    cls = policy_class(name)
    log = live_run.daemons[name].log()
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
    assert live_run.codes[name] == 0, log[-3000:]
    health, text = live_run.health[name], live_run.metrics[name]
    assert health["status"] == "ok" and health["advice_renewed"] is True
    assert health["machines"] == 4  # the late machine joined the running policy
    assert health["cycles"] >= 5
    if AttemptEnded in cls.WANTS:  # the attempt outcomes reached the policy's observe
        assert metric(text, "advisor_events_learned_total", kind="AttemptEnded") >= 2
    if issubclass(cls, PlacementBandit):
        agent = live_run.snapshots[name]["policy"]["state"]["agent"]
        assert agent["stats"], "no reward reached the bandit's estimates"
    if issubclass(cls, PlacementBandit | PowerPolicy):  # machine advice on free machines
        assert live_run.advice[name]["machines"], f"{name} served no machine advice"
    for machine, served in live_run.advice[name]["machines"].items():
        assert machine.endswith(DOMAIN) and served["expires"] > served["updated"]


def test_live_run_figures(live_run: LiveRun, capsys: pytest.CaptureFixture[str]) -> None:
    """The figures of the run, for the record (``pytest -s`` shows them)."""
    rows = []
    for name in LIVE:
        text = live_run.metrics[name]
        learned = re.findall(r"^advisor_events_learned_total{.*} (\S+)$", text, re.MULTILINE)
        health = live_run.health[name]
        rows.append(
            f"{name:20} cycles {health['cycles']:4} events {health['events']:4} "
            f"learned {sum(map(float, learned)):5.0f} "
            f"advice {len(live_run.advice[name]['machines']):2} machines"
        )
    with capsys.disabled():
        print(f"\nlive run of {len(LIVE)} policies, {live_run.seconds:.1f} s\n" + "\n".join(rows))
    assert len(rows) == len(LIVE) >= 18
