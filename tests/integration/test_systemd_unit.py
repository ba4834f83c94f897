"""The shipped unit under a real systemd: installed step by step as the README's "Running the
daemon" says, on this machine's own OS booted in namespaces (``pool/systemd_host.py``), against
the real test pool. Its sandbox is what an administrator gets: an option that blocks what the
daemon needs (as ``RestrictAddressFamilies`` without ``AF_NETLINK`` once did) fails here.

The install is the pure-Python wheel (``ADVISOR_PURE_PYTHON=1``): the compiled modules change
speed, not what the unit allows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import require

from advisor.condor.journal import Journal
from advisor.lab.relearn_bench import CHUNK, owner_events
from integration.conftest import ADVISOR_LISTEN, startd_ads, wait_for
from integration.pool.pool import COLLECTOR, PROJECT, ChrootPool
from integration.pool.systemd_host import SystemdHost, lacking

pytestmark = pytest.mark.integration

UNIT = "htcondor-advisor"
STATE = "/var/lib/htcondor-advisor"
CONFIG = "/etc/htcondor-advisor/advisor.yaml"
MEDIA = "/var/tmp/advisor-install"
"""Where the test puts what an administrator would bring: the wheel, the unit, the token."""


def _readme_install(wheel: str) -> str:
    """The README's install steps (section "Running the daemon"), with this test's files."""
    return f"""set -e
useradd --system --home-dir {STATE} --shell /usr/sbin/nologin htcondor-advisor
python3 -m venv /opt/htcondor-advisor
/opt/htcondor-advisor/bin/pip install -q {MEDIA}/{wheel}
ln -s /opt/htcondor-advisor/bin/htcondor-advisor /usr/local/bin/
install -d -m 0750 -g htcondor-advisor /etc/htcondor-advisor
install -m 0640 -g htcondor-advisor {MEDIA}/advisor.yaml {CONFIG}
install -d -m 0700 -o htcondor-advisor /etc/htcondor-advisor/tokens.d
install -m 0600 -o htcondor-advisor {MEDIA}/advisor.token /etc/htcondor-advisor/tokens.d/
/opt/htcondor-advisor/bin/htcondor-advisor check-config {CONFIG}
mkdir -p /etc/condor/config.d
echo 'CONDOR_HOST = 127.0.0.1' > /etc/condor/condor_config
echo 'LOCAL_CONFIG_DIR = /etc/condor/config.d' >> /etc/condor/condor_config
cp {MEDIA}/40-htcondor-advisor-expressions.conf /etc/condor/config.d/
cp {MEDIA}/50-htcondor-advisor-central-manager.conf /etc/condor/config.d/
echo 'ADVISOR_CONTROL_PERCENT = 0' > /etc/condor/config.d/99-as-the-test-pool.conf
install -m 0644 {MEDIA}/htcondor-advisor.service /etc/systemd/system/
systemctl daemon-reload && systemctl enable --now htcondor-advisor
"""


def _config() -> dict[str, object]:
    return {
        "pool": {
            "kind": "condor",
            "collector": COLLECTOR,
            "token_file": "/etc/htcondor-advisor/tokens.d/advisor.token",
            "merge": True,
            "active_idle_s": 0,
        },
        "policy": {"name": "frugal"},
        "publish": {"listen": ADVISOR_LISTEN, "interval": "2s"},
        "learning": {"observe_interval": "2s"},
        "state": {"snapshot_interval": "2s"},
    }


def _wheel(directory: Path) -> Path:
    """A pure-Python wheel of this checkout, built from a copy (a ``build/`` left by the
    compiled install would otherwise slip its modules in)."""
    source = directory / "source"
    skip = shutil.ignore_patterns(".*", "build", "out", "*.egg-info", "__pycache__")
    shutil.copytree(PROJECT, source, ignore=skip)
    env = {**os.environ, "ADVISOR_PURE_PYTHON": "1"}
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(directory)]
    subprocess.run([*pip, str(source)], check=True, env=env)
    (wheel,) = directory.glob("htcondor_advisor-*.whl")
    return wheel


@pytest.fixture(scope="module")
def central_manager(
    condor_pool: ChrootPool, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SystemdHost]:
    missing = lacking()
    require(missing is None, f"booting a systemd host needs {missing}")
    wheel = _wheel(tmp_path_factory.mktemp("wheel"))
    host = SystemdHost.boot(tmp_path_factory.mktemp("central-manager"))
    try:
        media = host.path(MEDIA)
        media.mkdir()
        shutil.copy(wheel, media)
        shutil.copy(PROJECT / "systemd/htcondor-advisor.service", media)
        shutil.copy(PROJECT / "deploy/common/40-htcondor-advisor-expressions.conf", media)
        shutil.copy(
            PROJECT / "deploy/central-manager/50-htcondor-advisor-central-manager.conf", media
        )
        (media / "advisor.yaml").write_text(yaml.safe_dump(_config()))
        (media / "advisor.token").write_text(
            condor_pool.token("htcondor-advisor", "READ", "NEGOTIATOR")
        )
        host.run(_readme_install(wheel.name))
        yield host
    finally:
        host.shutdown()


def _health() -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"http://{ADVISOR_LISTEN}/healthz", timeout=5) as answer:
            return dict(json.load(answer))
    except OSError:
        return None


def test_the_shipped_unit_runs_the_daemon_against_the_pool(central_manager: SystemdHost) -> None:
    host = central_manager
    state = host.show(UNIT, "ActiveState", "SubState", "NRestarts", "MainPID")
    running = (state["ActiveState"], state["SubState"], state["NRestarts"])
    assert running == ("active", "running", "0")
    user = host.run(f"ps -o user= -p {state['MainPID']}").stdout.strip()
    assert user == "htcondor-advisor"
    # the pool as the daemon sees it from inside the sandbox: all four machines, confirmed
    wait_for(
        lambda: (h := _health()) and h["status"] == "ok" and h["machines"] == 4,
        60,
        "the daemon's view of the pool",
        explain=lambda: f"{_health()}\n{host.journal(UNIT)}",
    )
    # its advice reaches the collector (the hooks' fetch, the token's merge)
    wait_for(
        lambda: all(
            str(ad.get("AdvisorPolicy", "")).startswith("frugal/")
            for ad in startd_ads(["AdvisorPolicy"]).values()
        ),
        60,
        "frugal's advice in every startd ad",
    )
    assert "Traceback" not in host.journal(UNIT)
    # the sandbox as systemd rates it (the README says 1.1, OK)
    rating = host.run(f"systemd-analyze security {UNIT} --no-pager").stdout.splitlines()[-1]
    assert rating.split("service: ")[1].startswith("1.1 OK"), rating


def test_reload_rereads_the_configuration_in_the_same_process(
    central_manager: SystemdHost,
) -> None:
    host = central_manager
    before = host.show(UNIT, "MainPID")["MainPID"]
    host.run(f"systemctl reload {UNIT}")
    wait_for(lambda: "configuration reloaded" in host.journal(UNIT), 30, "the reload's log line")
    after = host.show(UNIT, "ActiveState", "MainPID")
    assert after == {"ActiveState": "active", "MainPID": before}


def test_stop_saves_a_snapshot_and_start_resumes_from_it(central_manager: SystemdHost) -> None:
    host = central_manager
    host.run(f"systemctl stop {UNIT}")
    stopped = host.show(UNIT, "ActiveState", "Result", "ExecMainStatus")
    assert stopped == {"ActiveState": "inactive", "Result": "success", "ExecMainStatus": "0"}
    snapshots = sorted(host.path(STATE).glob("snapshot-*.json"))
    assert snapshots, "no snapshot in the state directory"
    owner = host.run("id -u htcondor-advisor").stdout.strip()
    saved = snapshots[-1].stat()
    assert (saved.st_uid, saved.st_mode & 0o777) == (int(owner), 0o600)
    host.run(f"systemctl start {UNIT}")
    assert f"resumed from {snapshots[-1].name}" in host.journal(UNIT)


def _campus_journal(state: Path) -> None:
    """A journal as a year of a 600-PC campus leaves it (1.5 M owner events, 137 MB), written as
    the live source writes it. Its machines are not the test pool's: relearning reads them all
    and keeps none, which is the reading's time without the test pool's policy learning it."""
    events, _ = owner_events(365, 0.5, 1)
    journal = Journal(state)
    for at in range(0, len(events), CHUNK):
        chunk = events[at : at + CHUNK]
        journal.append(chunk, chunk[-1].time)


def _timed_start(host: SystemdHost) -> tuple[float, subprocess.CompletedProcess[str]]:
    """``systemctl start``, which returns once the unit is ready (or has failed): how long."""
    began = time.monotonic()
    started = host.run(f"systemctl start {UNIT}", check=False)
    return time.monotonic() - began, started


def test_relearning_a_long_journal_extends_the_start(central_manager: SystemdHost) -> None:
    """An idle-time policy learns its owner history again from the journal when it starts
    (``advisor/lab/relearn.py``), which on a large pool takes longer than a unit's start timeout.
    Its notes to systemd extend the start. The timeout (a drop-in) is twice a start that relearns
    nothing, plus two seconds; the relearning start must outlast it, or the test proves nothing."""
    host = central_manager
    config = _config()
    config["policy"] = {"name": "idle-min"}
    config["pool"] = {**config["pool"], "journal": True, "journal_keep": None}  # type: ignore[dict-item]
    dropin = f"/etc/systemd/system/{UNIT}.service.d/start-timeout.conf"
    try:
        host.run(f"systemctl stop {UNIT} && rm -rf {STATE}/*")
        host.path(CONFIG).write_text(yaml.safe_dump(config))
        _campus_journal(host.path(STATE))
        host.run(f"chown -R htcondor-advisor: {STATE}")
        plain, _ = _timed_start(host)  # no snapshot yet: nothing to relearn
        wait_for(lambda: any(host.path(STATE).glob("snapshot-*.json")), 30, "the first snapshot")
        timeout = 2 * plain + 2
        host.run(
            f"mkdir -p {Path(dropin).parent} && printf '[Service]\\nTimeoutStartSec=%.1fs\\n' "
            f"{timeout} > {dropin} && systemctl daemon-reload && systemctl stop {UNIT}"
        )
        before = host.show(UNIT, "NRestarts")["NRestarts"]
        took, started = _timed_start(host)
        log = host.journal(UNIT)
        assert started.returncode == 0, f"{started.stderr}{log[-3000:]}"
        assert took > timeout, f"relearned in {took:.1f} s, within the {timeout:.1f} s timeout"
        assert host.show(UNIT, "ActiveState", "NRestarts") == {
            "ActiveState": "active",
            "NRestarts": before,
        }
        assert re.search(r"idle-min/1 learned \d+ events again from the journal", log)
    finally:
        host.run(f"rm -f {dropin} && systemctl daemon-reload && systemctl stop {UNIT}")
        host.path(CONFIG).write_text(yaml.safe_dump(_config()))
        host.run(f"rm -rf {STATE}/* && systemctl start {UNIT}")


def test_a_stuck_daemon_is_restarted_by_the_watchdog(central_manager: SystemdHost) -> None:
    """With the shipped 10 min shortened to 6 s (a drop-in, as ``systemctl edit`` writes)."""
    host = central_manager
    host.run(
        f"mkdir -p /etc/systemd/system/{UNIT}.service.d && printf '[Service]\\nWatchdogSec=6s\\n'"
        f" > /etc/systemd/system/{UNIT}.service.d/watchdog.conf && systemctl daemon-reload"
        f" && systemctl restart {UNIT}"
    )
    first = host.show(UNIT, "MainPID", "NRestarts", "WatchdogUSec")
    assert first["WatchdogUSec"] == "6s"
    time.sleep(15)  # more than twice the watchdog time: pinged, so never restarted
    assert host.show(UNIT, "MainPID", "NRestarts") == {
        "MainPID": first["MainPID"],
        "NRestarts": first["NRestarts"],
    }
    host.run(f"kill -STOP {first['MainPID']}")  # stuck: alive, answering nothing

    def restarted() -> bool:
        now = host.show(UNIT, "SubState", "MainPID")
        return now["SubState"] == "running" and now["MainPID"] not in ("0", first["MainPID"])

    wait_for(restarted, 60, "the watchdog's restart", explain=lambda: host.journal(UNIT)[-3000:])
    assert "Watchdog timeout" in host.journal(UNIT)
    assert int(host.show(UNIT, "NRestarts")["NRestarts"]) == int(first["NRestarts"]) + 1
    wait_for(lambda: (h := _health()) and h["status"] == "ok", 60, "advice served again")


def test_a_refused_configuration_stops_after_three_tries(central_manager: SystemdHost) -> None:
    host = central_manager
    config = _config()
    config["pool"] = {**config["pool"], "colector": COLLECTOR}  # type: ignore[dict-item]
    host.path(CONFIG).write_text(yaml.safe_dump(config))
    host.run(f"systemctl stop {UNIT} && systemctl reset-failed {UNIT}")  # a fresh start count
    host.run(f"systemctl start {UNIT}", check=False)  # ExecStartPre refuses it: exit 2
    wait_for(
        lambda: "Start request repeated too quickly" in host.journal(UNIT),
        60,
        "the start limit (three starts in a minute)",
        explain=lambda: host.journal(UNIT)[-3000:],
    )
    assert host.show(UNIT, "ActiveState")["ActiveState"] == "failed"
    log = host.journal(UNIT)
    refusals = [line for line in log.splitlines() if "check-config: error: pool.colector" in line]
    assert len(refusals) == 3  # one line each, naming the key
    assert "Traceback" not in log
