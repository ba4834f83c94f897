"""Configuration checks: each kind of mistake is refused with the key path, value and fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from advisor.cli import main
from advisor.commands.run import live_pool_settings
from advisor.condor.factory import collector_address
from advisor.daemon.config import check_config, load_config
from advisor.daemon.fields import ConfigError

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "advisor.yaml"
SIM = {"kind": "sim", "days": 2, "scale": 0.05}
CONDOR = {"kind": "condor", "collector": "cm:9618"}


def test_example_config_is_valid_and_annotated() -> None:
    config = load_config(EXAMPLE)
    assert config.pool["kind"] == "condor"
    assert config.pool["collector"] == ("cm.example.org", 9618)
    assert config.pool["types"]["Big"] == {"active": 90.0, "idle": 60.0, "sleep": 3.0}
    assert config.pool["merge"] and config.pool["journal"]
    assert config.publish["listen"] == ("127.0.0.1", 9681)
    assert config.learning["retrain"] == "0 0 1 * *"
    assert EXAMPLE.read_text().count("#") > 30


def test_defaults_fill_every_section() -> None:
    config = check_config({"pool": SIM})
    assert config.policy["name"] == "random"
    assert config.publish["advice_lifetime"] == 3600.0
    assert config.state["snapshot_interval"] == 86400.0  # simulated pool: one simulated day
    assert config.policy_seed == 1  # the scenario seed, so a twin matches a replay
    live = check_config({"pool": {"kind": "condor", "collector": "cm:9618"}})
    assert live.state["snapshot_interval"] == 300.0
    assert not live.simulated


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "pool: missing (required)"),
        ({"pool": SIM, "polcy": {}}, "polcy: unknown section; allowed: pool, policy"),
        ({"pool": {"kind": "slurm"}}, "pool.kind: must be one of sim, condor, got 'slurm'"),
        ({"pool": {"kind": "condor"}}, "pool.collector: missing (required for kind condor"),
        ({"pool": {**SIM, "collector": "x:1"}}, "pool.collector: unknown key for kind sim"),
        ({"pool": {**SIM, "days": 0}}, "pool.days: must be an integer >= 1, got 0"),
        ({"pool": {**SIM, "speed": "fast"}}, "pool.speed: must be 'max' or a number > 0"),
        ({"pool": SIM, "publish": {"listen": "localhost"}}, "publish.listen: must be HOST:PORT"),
        ({"pool": SIM, "publish": {"listen": "h:99999"}}, "port 0-65535"),
        ({"pool": SIM, "publish": {"interval": "soon"}}, "publish.interval: must be seconds or"),
        ({"pool": SIM, "publish": {"advice_lifetime": 0}}, "publish.advice_lifetime: must be at"),
        ({"pool": SIM, "publish": {"dry_run": "yes"}}, "publish.dry_run: must be true or false"),
        ({"pool": SIM, "learning": {"retrain": "monthly"}}, "learning.retrain: must be a crontab"),
        ({"pool": SIM, "state": {"keep": 0}}, "state.keep: must be an integer >= 1, got 0"),
        ({"pool": SIM, "logging": {"level": "LOUD"}}, "logging.level: must be one of DEBUG"),
        ({"pool": SIM, "metrics": {"port": 1}}, "metrics.port: unknown key; allowed: enabled"),
        ({"pool": SIM, "policy": {"name": "nope"}}, "policy.name: unknown policy 'nope'"),
        (
            {"pool": SIM, "policy": {"options": {"x": 1}}},
            "policy.options: policy 'random': unknown",
        ),
        ({"pool": SIM, "publish": []}, "publish: must be a mapping, got []"),
        ({"pool": {**CONDOR, "merge": "yes"}}, "pool.merge: must be true or false, got 'yes'"),
        ({"pool": {**CONDOR, "journal": 1}}, "pool.journal: must be true or false, got 1"),
        ({"pool": {**CONDOR, "event_log": ""}}, "pool.event_log: must be a non-empty string"),
        ({"pool": {**CONDOR, "active_idle_s": "idle"}}, "pool.active_idle_s: must be seconds"),
        (
            {"pool": {**CONDOR, "watts": {"active": 57, "idle": 40}}},
            "pool.watts: must be a mapping with exactly active, idle and sleep (W)",
        ),
        (
            {"pool": {**CONDOR, "watts": {"active": -1, "idle": 40, "sleep": 2}}},
            "pool.watts.active: must be a number >= 0.0, got -1",
        ),
        (
            {"pool": {**CONDOR, "types": {"Big": {"active": 90, "idle": "x", "sleep": 3}}}},
            "pool.types.Big.idle: must be a number >= 0.0, got 'x'",
        ),
        ({"pool": {**CONDOR, "types": [1]}}, "pool.types: must map AdvisorMachineType names"),
        ({"pool": {**CONDOR, "state_dir": "/x"}}, "pool.state_dir: unknown key for kind condor"),
    ],
)
def test_each_mistake_names_key_value_and_what_is_allowed(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_config(raw)
    assert message in str(info.value)


def test_oracle_policy_refused_for_a_live_pool(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump({"pool": {"kind": "condor", "collector": "cm:9618"}}))
    assert main(["run", "--config", str(path), "--policy", "crystal"]) == 2


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("pool:\n  kind: sim\n  days: [1,\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+:\d+: not valid YAML"):
        load_config(path)


def test_check_config_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(EXAMPLE)]) == 0
    assert "ok" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("pool: {kind: sim}\npublish: {advice_lifetime: -5}\n")
    assert main(["check-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "publish.advice_lifetime: must be at least" in err and "-5" in err


def test_command_line_overrides_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump({"pool": SIM, "policy": {"name": "random"}}))
    config = load_config(path, {"pool": {"days": 5}, "policy": {"name": "crystal"}})
    assert config.pool["days"] == 5 and config.pool["scale"] == 0.05
    assert config.policy["name"] == "crystal"


def test_live_pool_gets_the_daemons_state_dir_lifetime_and_label(tmp_path: Path) -> None:
    raw = {
        "pool": CONDOR,
        "state": {"directory": str(tmp_path)},
        "publish": {"advice_lifetime": 90},
    }
    settings = live_pool_settings(check_config(raw), "ranker/2")
    assert settings["state_dir"] == str(tmp_path)
    assert settings["advice_lifetime_s"] == 90.0 and settings["policy"] == "ranker/2"
    assert collector_address(settings["collector"]) == "cm:9618"
    assert collector_address(("::1", 9618)) == "[::1]:9618"
    quiet = check_config({**raw, "pool": {**CONDOR, "journal": False}})
    assert live_pool_settings(quiet, "ranker/2")["state_dir"] is None
