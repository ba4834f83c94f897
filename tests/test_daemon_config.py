"""Configuration checks: each kind of mistake is refused with the key path, value and fix."""

from __future__ import annotations

import errno
import os
import re
import socket
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from configkit import example_with_token

from advisor.cli import main
from advisor.commands.run import live_pool_settings
from advisor.condor.factory import collector_address
from advisor.daemon.access import exposure_warnings
from advisor.daemon.config import check_config, load_config
from advisor.daemon.config_host import check_host, listen_error
from advisor.daemon.fields import ConfigError
from plugins.contract.policy import Policy

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "advisor.yaml"
SIM = {"kind": "sim", "days": 2, "scale": 0.05}
CONDOR = {"kind": "condor", "collector": "cm:9618"}


def test_example_config_is_valid_and_annotated(tmp_path: Path) -> None:
    config = load_config(example_with_token(tmp_path))  # its token exists once deployed
    assert config.pool["kind"] == "condor"
    assert config.pool["collector"] == ("cm.example.org", 9618)
    assert config.pool["types"]["Big"] == {"active": 90.0, "idle": 60.0, "sleep": 3.0}
    assert config.pool["merge"] and config.pool["journal"]
    # one port everywhere: the execute points' hook asks the port the example listens on, on
    # the pool's network, and the example lets more than loopback read (no warning)
    assert config.publish["listen"] == ("0.0.0.0", 9681)
    hook_conf = (
        EXAMPLE.parents[1] / "deploy/execute-point/50-htcondor-advisor-execute-point.conf"
    ).read_text()
    assert "ADVISOR_URL = http://$(CONDOR_HOST):9681\n" in hook_conf
    assert exposure_warnings(config.publish) == []
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
        ({"pool": {**SIM, "days": 0}}, "pool.days: must be an integer from 1 to 3660, got 0"),
        ({"pool": {**SIM, "speed": "fast"}}, "pool.speed: must be 'max' or a number > 0"),
        ({"pool": SIM, "publish": {"listen": "localhost"}}, "publish.listen: must be HOST:PORT"),
        ({"pool": SIM, "publish": {"listen": "h:99999"}}, "port 0-65535"),
        ({"pool": SIM, "publish": {"interval": "soon"}}, "publish.interval: must be seconds or"),
        (
            {"pool": SIM, "publish": {"advice_lifetime": 0}},
            "publish.advice_lifetime: must be a dur",
        ),
        ({"pool": SIM, "publish": {"dry_run": "yes"}}, "publish.dry_run: must be true or false"),
        ({"pool": SIM, "learning": {"retrain": "monthly"}}, "learning.retrain: must be a crontab"),
        (
            {"pool": SIM, "state": {"keep": 0}},
            "state.keep: must be an integer from 1 to 1000, got 0",
        ),
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


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        ({"name": "crystal"}, "policy.name: 'crystal' reads the future; only a simulated pool"),
        ({"name": "or-oracle"}, "policy.name: 'or-oracle' reads the future; only a replay can"),
        (
            {"name": "or-ppo", "options": {"agent": "runs/agent.npz"}},
            "policy.options.agent: 'runs/agent.npz' is a relative path, and the daemon runs from /",
        ),
        (
            {"name": "or-ppo", "options": {"agent": "/etc/hostname"}},
            "policy.options.agent: /etc/hostname: not an agent written by train-power (no .npz",
        ),
    ],
)
def test_check_config_refuses_what_run_would_refuse(
    policy: dict, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each passed check-config (the unit's ExecStartPre), and then the daemon refused to start
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump({"pool": CONDOR, "policy": policy}))
    assert main(["check-config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and "allow_pickle" not in err[0]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (
            {"publish": {"advice_lifetime": "30s"}},
            "publish.advice_lifetime: 30 s is not longer than publish.interval (60 s)",
        ),
        ({"publish": {"interval": "0.5s"}}, "publish.interval: must be a duration from 1s"),
        ({"learning": {"observe_interval": 0.001}}, "learning.observe_interval: must be a dur"),
    ],
)
def test_timings_that_cannot_work_are_refused(raw: dict, said: str) -> None:
    # advice that lapses before its renewal leaves the pool flickering between advised and not
    with pytest.raises(ConfigError) as info:
        check_config({"pool": SIM, **raw})
    assert said in str(info.value)


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("pool:\n  kind: sim\n  days: [1,\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+:\d+: not valid YAML"):
        load_config(path)


def test_check_config_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(example_with_token(tmp_path))]) == 0
    checked = capsys.readouterr()
    assert "ok" in checked.out and "gives no advice" not in checked.err
    quiet = tmp_path / "quiet.yaml"  # no policy: random, which advises nothing, said so
    quiet.write_text(yaml.safe_dump({"pool": CONDOR, "state": {"directory": str(tmp_path)}}))
    assert main(["check-config", str(quiet)]) == 0
    assert "warning: policy.name: random (the default) gives no advice" in capsys.readouterr().err
    forgetful = tmp_path / "forgetful.yaml"  # no journal: an idle policy's owner history is lost
    config = {"pool": {**CONDOR, "journal": False}, "policy": {"name": "idle-min"}}
    forgetful.write_text(yaml.safe_dump({**config, "state": {"directory": str(tmp_path)}}))
    assert main(["check-config", str(forgetful)]) == 0
    said = "warning: pool.journal: false; idle-min then forgets the machines' owner history"
    assert said in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("pool: {kind: sim}\npublish: {advice_lifetime: -5}\n")
    assert main(["check-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "publish.advice_lifetime: must be a duration from" in err and "-5" in err


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


# -- every way the file itself can be wrong is one located line ----------------------------------

EXAMPLE_BYTES = EXAMPLE.read_bytes()


def _variant(old: bytes, new: bytes) -> bytes:
    assert old in EXAMPLE_BYTES, old
    return EXAMPLE_BYTES.replace(old, new, 1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_variant(b"dry_run: false", b"dry_run: f\x07alse"), r":\d+:\d+: not valid YAML .*U\+0007"),
        (_variant(b"dry_run: false", b"dry_run: \x1b[0m"), r":\d+:\d+: not valid YAML .*U\+001B"),
        (
            _variant(b"# htcondor", "# café htcondor".encode("latin-1")),
            r":1:6: not UTF-8 text \(byte 0xe9\)",
        ),
        ("pool: {kind: sim}\n".encode("utf-16"), r":1:1: not UTF-8 text .*save the file as UTF-8"),
        (
            _variant(b"  interval: 60s", b"  interval: 60s\n  interval: 30s"),
            r":\d+:3: duplicate key 'interval' \(first at line \d+\); keep one of them",
        ),
        (EXAMPLE_BYTES + b"\npolicy: {name: random}\n", r"duplicate key 'policy' \(first at"),
        (_variant(b"keep: 5", b"keep: 2024-13-45"), r":\d+:9: not valid YAML \(month must be"),
        (_variant(b"keep: 5", b"keep: !!int five"), r":\d+:9: not valid YAML \(invalid literal"),
        (_variant(b"keep: 5", b"keep: [5"), r":\d+:\d+: not valid YAML \(expected ',' or ']'"),
        (b"pool: " + b"[" * 3000, r"yaml: not valid YAML \(nested too deeply\)"),
        (b"- pool\n- policy\n", r"yaml: must be a mapping of sections"),
    ],
)
def test_a_broken_file_is_one_located_line(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "advisor.yaml"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert text.startswith(str(path)) and "\n" not in text
    assert re.search(message, text), text


def test_keys_merged_from_an_anchor_may_be_overridden(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    watts = "{active: 90, idle: 60, sleep: 3}"
    path.write_text(
        f"pool:\n  kind: condor\n  collector: cm:9618\n  types:\n    Big: &big {watts}\n"
        "    Small: {<<: *big, active: 50}\n"
    )
    assert load_config(path).pool["types"]["Small"] == {"active": 50.0, "idle": 60.0, "sleep": 3.0}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"publish": {"interval": float("inf")}}, "publish.interval: must be a duration from"),
        ({"publish": {"advice_lifetime": float("nan")}}, "publish.advice_lifetime: must be a dur"),
        ({"publish": {"advice_lifetime": "99999999999d"}}, "to 23h, got '99999999999d'"),
        ({"publish": {"advice_lifetime": 10**400}}, "publish.advice_lifetime: must be a duration"),
        ({"learning": {"observe_interval": "2d"}}, "learning.observe_interval: must be a duration"),
        ({"state": {"snapshot_interval": -1}}, "state.snapshot_interval: must be a duration"),
        ({"state": {"keep": 10**30}}, "state.keep: must be an integer from 1 to 1000"),
        ({"policy": {"seed": 2**64}}, "policy.seed: must be an integer from 0 to 4294967295"),
        ({"pool": {**SIM, "days": 10**9}}, "pool.days: must be an integer from 1 to 3660"),
        ({"pool": {**SIM, "scale": float("inf")}}, "pool.scale: must be a number > 0.0 and <= 100"),
        ({"pool": {**SIM, "speed": "inf"}}, "pool.speed: must be 'max' or a number > 0"),
        ({"pool": {**SIM, "speed": float("nan")}}, "pool.speed: must be 'max' or a number > 0"),
        (
            {"pool": {**CONDOR, "watts": {"active": float("inf"), "idle": 40, "sleep": 2}}},
            "pool.watts.active: must be a number >= 0.0, got inf",
        ),
        ({"pool": {**CONDOR, "active_idle_s": "2d"}}, "pool.active_idle_s: must be a duration"),
        ({"publish": {"listen": "127.0.0.1:9²"}}, "publish.listen: must be HOST:PORT"),
        ({"publish": {"listen": "a host:80"}}, "publish.listen: must be HOST:PORT with a host"),
        ({"state": {"directory": "/tmp/a\0b"}}, "state.directory: must be a path without NUL"),
        ({"state": {"kep": 1}}, "state.kep: unknown key; allowed: directory"),
        ({"state": {"x\ny": 2}}, "state.'x\\ny': unknown key"),
        ({None: 1}, "None: unknown section"),
        ({"policy": {"name": "crystal", "options": {"x": 1}}}, "policy.options: policy 'crystal'"),
    ],
)
def test_non_finite_huge_and_odd_values_are_refused_with_their_key(raw: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_config({"pool": SIM, **raw})
    assert message in str(info.value) and "\n" not in str(info.value)


def test_policy_options_are_checked_against_their_type(monkeypatch: pytest.MonkeyPatch) -> None:
    from plugins.contract.policy import Option

    class Tuned(Policy):
        NAME = "tuned"
        OPTIONS: ClassVar[Mapping[str, Option]] = {
            "epsilon": Option(0.1, float, "a float"),
            "count": Option(2, int, "an int"),
            "flag": Option(True, lambda t: t == "on", "a flag"),
            "mode": Option("a", str, "text", lambda v: None if v in ("a", "b") else "a or b"),
        }

        def advise(self, view: Any, now: float) -> Any:
            raise NotImplementedError

    monkeypatch.setattr("advisor.daemon.config_policy.policy_class", lambda name: Tuned)

    def options(**values: Any) -> dict[str, Any]:
        return check_config({"pool": SIM, "policy": {"options": values}}).policy["options"]

    # numbers go through the option's parser as --set would pass them; flags stay flags
    assert options(epsilon=0.2, count=3, flag=False, mode="b") == {
        "epsilon": "0.2",
        "count": "3",
        "flag": False,
        "mode": "b",
    }
    assert options(epsilon="0.3") == {"epsilon": "0.3"}
    cases: list[tuple[dict[str, Any], str | None]] = [
        ({"epsilon": float("nan")}, "policy.options.epsilon: must be a finite number, got nan"),
        ({"epsilon": "inf"}, "policy 'tuned': option epsilon='inf': must be a finite number"),
        ({"epsilon": [1]}, "policy.options.epsilon: must be a number, got [1]"),
        ({"count": 1.5}, "policy.options.count: must be an integer, got 1.5"),
        ({"flag": "yes please"}, None),
        ({"flag": 2}, "policy.options.flag: must be true or false, got 2"),
        ({"mode": 7}, "policy.options: policy 'tuned': option mode='7': a or b"),
        ({"mode": {"a": 1}}, "policy.options.mode: must be text as in --set mode=VALUE"),
    ]
    for values, message in cases:
        if message is None:
            options(**values)
            continue
        with pytest.raises(ConfigError, match=re.escape(message)):
            options(**values)


# -- what the file asks of this machine ---------------------------------------------------------


def _write(tmp_path: Path, **sections: Any) -> Path:
    path = tmp_path / "advisor.yaml"
    path.write_text(yaml.safe_dump({"pool": SIM, **sections}))
    return path


def test_paths_that_cannot_be_what_they_name_are_refused(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for state, message in [
        (a_file, f"state.directory: '{a_file}' is a file, not a directory; give the path of a"),
        (a_file / "sub", f"state.directory: '{a_file / 'sub'}' cannot be created: '{a_file}' is"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config(_write(tmp_path, state={"directory": str(state)}))
    condor = {**CONDOR, "journal": False}
    for key in ("token_file", "event_log"):
        path = _write(tmp_path, pool={**condor, key: str(tmp_path)})
        with pytest.raises(ConfigError, match=f"pool.{key}: '{tmp_path}' is a directory"):
            load_config(path)
    missing = tmp_path / "no-token"
    path = _write(tmp_path, pool={**condor, "token_file": str(missing)})
    with pytest.raises(ConfigError, match=f"pool.token_file: '{missing}' does not exist"):
        load_config(path)  # check-config says so before the service starts


def test_state_directory_is_created_private_at_start(tmp_path: Path) -> None:
    state = tmp_path / "deep" / "state"
    config = load_config(_write(tmp_path, state={"directory": str(state)}))
    assert not state.exists()  # checking creates nothing
    check_host(config, starting=True)
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    config = check_config({"pool": SIM, "state": {"directory": str(locked / "state")}})
    if os.geteuid() != 0:  # (root may write there: the next case fails for root too)
        with pytest.raises(ConfigError, match=r"state.directory: cannot use .*Permission denied"):
            check_host(config, starting=True)
    beneath_a_file = tmp_path / "a-file"
    beneath_a_file.write_text("")
    config = check_config({"pool": SIM, "state": {"directory": str(beneath_a_file / "state")}})
    with pytest.raises(ConfigError, match=r"state.directory: .* cannot be created: .* is a file;"):
        check_host(config, starting=True)


def test_listen_host_must_resolve_and_a_busy_port_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, publish={"listen": "no-such-host.invalid:9681"})
    with pytest.raises(ConfigError, match=r"publish.listen: host 'no-such-host\.invalid' does not"):
        load_config(path)
    busy = OSError(errno.EADDRINUSE, "Address already in use")
    error = listen_error(("127.0.0.1", 9681), busy)
    assert str(error) == (
        "publish.listen: 127.0.0.1:9681 is in use (another htcondor-advisor?); choose another port"
    )
    assert listen_error(("::1", 80), OSError(errno.EACCES, "denied")) is not None
    assert listen_error(("::1", 80), PermissionError(errno.EACCES, "denied", "/x")) is None


def test_run_on_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        twin = ["--pool", "sim:campus", "--days", "1", "--scale", "0.03", "--no-progress"]
        twin += ["--state-dir", str(tmp_path / "state")]
        done = subprocess.run(
            [sys.executable, "-m", "advisor.cli", "run", *twin, "--listen", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (  # the address came from --listen
        f"htcondor-advisor run: error: --listen: 127.0.0.1:{port} is in use "
        "(another htcondor-advisor?); choose another port"
    )
    assert "Traceback" not in done.stderr


def test_check_config_with_a_control_character_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "advisor.yaml"
    path.write_bytes(_variant(b"interval: 60s", b"interval: 6\x000s"))
    done = subprocess.run(
        [sys.executable, "-m", "advisor.cli", "check-config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert re.fullmatch(
        rf"htcondor-advisor check-config: error: {re.escape(str(path))}:\d+:\d+: not valid YAML "
        r"\(unprintable character U\+0000\); .*\n",
        done.stderr,
    )


def test_staleness_below_the_poll_interval_is_refused() -> None:
    raw = {
        "pool": {"kind": "condor", "collector": "cm:9618"},
        "publish": {"stale_after": "30s"},
        "learning": {"observe_interval": "60s"},
    }
    with pytest.raises(ConfigError, match=r"^publish\.stale_after: 30 s is shorter than"):
        check_config(raw)
    raw["publish"] = {"advice_lifetime": "2d"}  # the hook refuses expiries over a day ahead
    with pytest.raises(ConfigError, match=r"^publish\.advice_lifetime"):
        check_config(raw)


def test_run_once_against_an_unreachable_pool_says_so_and_fails(tmp_path: Path) -> None:
    config = tmp_path / "advisor.yaml"
    state = tmp_path / "state"
    config.write_text(
        f"pool: {{kind: condor, collector: '127.0.0.1:9'}}\nstate: {{directory: {state}}}\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "advisor.cli", "run", "--config", str(config), "--once"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.splitlines()[-1] == (
        "htcondor-advisor run: error: pool.collector: the pool did not answer at 127.0.0.1:9; "
        "check that its collector runs there and lets this host read"
    )


def test_a_command_line_option_that_sets_a_bad_key_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "pool.days: unknown key for kind condor" sent an administrator looking in a file
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump({"pool": CONDOR, "state": {"directory": str(tmp_path)}}))
    assert main(["run", "--config", str(path), "--once", "--days", "3"]) == 2
    assert "error: --days (pool.days): unknown key for kind condor" in capsys.readouterr().err
    assert main(["run", "--pool", "sim:campus", "--speed", "abc"]) == 2
    assert "error: --speed (pool.speed): must be 'max' or a number" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("document", "said"),
    [
        (  # a twin is a campus: a policy of the grid queue would fail at start
            {"pool": SIM, "policy": {"name": "edf"}},
            "policy.name: policy 'edf' serves the grid-queue model, not campus",
        ),
        (  # the store is read at start: a directory train-idle never wrote is refused now
            {"pool": SIM, "policy": {"name": "idle-min"}, "learning": {"idle_models": "/"}},
            "learning.idle_models: /: no meta.json; train models with",
        ),
        (  # the twin's campus is read at start as well
            {"pool": {**SIM, "scenario_config": "/etc/hostname"}},
            "pool.scenario_config: /etc/hostname: ",
        ),
    ],
)
def test_check_config_reads_what_run_reads_at_start(
    document: dict, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each passed check-config, and run then refused it with a line that named no key
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump({**document, "state": {"directory": str(tmp_path / "s")}}))
    assert main(["check-config", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err
    assert main(["run", "--config", str(path), "--once"]) == 2
    assert said in capsys.readouterr().err


def test_null_leaves_a_key_unset_and_a_switch_takes_1_and_0_as_on_the_command_line() -> None:
    unset = {"logging": {"level": None}, "state": {"snapshot_interval": None}}
    config = check_config({"pool": SIM, **unset})
    assert config.logging["level"] is None and config.state["snapshot_interval"] == 86400.0
    for written, taken in ((1, True), (0, False)):
        policy = {"name": "bandit-cluster", "options": {"reboot_rule": written}}
        config = check_config({"pool": SIM, "policy": policy})
        assert config.policy["options"]["reboot_rule"] is taken
    with pytest.raises(ConfigError, match="reboot_rule: must be true or false, got 2"):
        check_config(
            {"pool": SIM, "policy": {"name": "bandit-cluster", "options": {"reboot_rule": 2}}}
        )
