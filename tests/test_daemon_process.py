"""The daemon as an administrator meets it: a real process, real signals, a real HTTP client."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import yaml

from advisor.lab.crash_bench import crash_twin
from advisor.lab.daemon_process import DaemonProcess

HOOK_LINE = re.compile(r'^Advisor[A-Za-z]+ = (-?[\d.e+-]+|true|false|"[^"]*"|\{[^}]*\})$')
TWIN = ["--pool", "sim:campus", "--days", "2", "--scale", "0.05", "--seed", "3"]


def _health(daemon: DaemonProcess) -> dict:
    return json.loads(daemon.get("/healthz")[2])


def test_endpoints_answer_while_running_and_sigterm_saves_and_resumes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    args = [*TWIN, "--policy", "crystal", "--state-dir", str(state), "--out", str(tmp_path)]
    daemon = DaemonProcess([*args, "--speed", "3000"])
    start = daemon.wait_for(lambda: daemon.address and _health(daemon)["now"])
    machine = daemon.wait_for(
        lambda: next(iter(json.loads(daemon.get("/advice")[2])["machines"]), None)
    )
    status, ctype, body = daemon.get(f"/advice/{machine}")
    assert status == 200 and ctype.startswith("text/plain")
    lines = body.splitlines()
    assert lines and all(HOOK_LINE.match(line) for line in lines), body
    attrs = dict(line.split(" = ", 1) for line in lines)
    assert {"AdvisorRank", "AdvisorHold", "AdvisorPredictedIdle", "AdvisorExpires"} <= set(attrs)
    assert attrs["AdvisorPolicy"] == '"crystal/1"'
    assert float(attrs["AdvisorExpires"]) > float(attrs["AdvisorUpdated"])
    assert daemon.get("/advice/no-such-machine") == (200, "text/plain; charset=utf-8", "")
    status, ctype, metrics = daemon.get("/metrics")
    assert status == 200 and "advisor_cycle_seconds_count" in metrics
    assert 'advisor_advice_served_total{format="hook"}' in metrics
    explained = json.loads(daemon.get(f"/explain/{machine}")[2])
    assert explained["machine"] == machine and explained["advice"]["rank"] < 0
    assert daemon.get("/nothing")[0] == 404
    daemon.wait_for(lambda: _health(daemon)["now"] > start + 6 * 3600)
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.finish() == 0
    assert not (tmp_path / "summary.json").exists()
    assert list(state.glob("snapshot-*.json"))
    again = DaemonProcess([*args, "--speed", "max"])
    assert again.finish() == 0
    assert "resumed from snapshot-" in again.log()
    assert json.loads((tmp_path / "summary.json").read_text())["policy"] == "crystal/1"


def test_sighup_reloads_the_configuration_and_keeps_learned_state(tmp_path: Path) -> None:
    path = tmp_path / "advisor.yaml"
    config: dict[str, dict[str, object]] = {
        "pool": {"kind": "sim", "days": 3, "scale": 0.05, "seed": 3, "speed": 2000},
        "publish": {"listen": "127.0.0.1:0", "advice_lifetime": "1h"},
        "state": {"directory": str(tmp_path / "state")},
    }
    path.write_text(yaml.safe_dump(config))
    daemon = DaemonProcess(["--config", str(path)])
    daemon.wait_for(lambda: daemon.address and _health(daemon)["events"] > 0)
    config["publish"]["advice_lifetime"] = "30m"
    config["publish"]["dry_run"] = True
    path.write_text(yaml.safe_dump(config))
    before = _health(daemon)["events"]
    daemon.proc.send_signal(signal.SIGHUP)
    after = daemon.wait_for(lambda: (h := _health(daemon))["reloads"] == 1 and h)
    assert after["advice_lifetime_s"] == 1800.0 and after["dry_run"] is True
    assert after["events"] >= before  # the learned state and counters were kept
    path.write_text("pool: {kind: sim}\npublish: {advice_lifetime: never}\n")
    daemon.proc.send_signal(signal.SIGHUP)
    daemon.wait_for(lambda: "reload of" in daemon.log())
    assert _health(daemon)["reloads"] == 1  # a bad file is refused; the daemon keeps running
    assert "publish.advice_lifetime" in daemon.log()
    daemon.proc.send_signal(signal.SIGINT)
    assert daemon.finish() == 0


def test_sigkill_at_random_moments_always_restarts_from_a_valid_snapshot(tmp_path: Path) -> None:
    twin = [*TWIN[:-4], "--days", "3", "--scale", "0.05", "--seed", "3"]
    twin += ["--policy", "crystal", "--snapshot-interval", "2h"]
    report = crash_twin(twin, tmp_path, kills=2, speed=20000, seed=7)
    assert report.kills == 2 and report.fresh_starts == 1 and report.corrupt_skipped == 0
    assert report.resumed == 2  # the second start and the final run
    assert all(0 <= lost <= 2 * 3600 + 120 for lost in report.lost_s), report.lost_s
    assert report.final is not None and report.reference is not None
    assert report.final["energy_mwh"] == report.reference["energy_mwh"]
