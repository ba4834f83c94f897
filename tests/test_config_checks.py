"""What a new administrator meets (issue 25): ``check-config`` sees what ``run`` would refuse,
every mistake of a file at once, one line each naming its key, and honest exit statuses."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import pwd
import re
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from configkit import Quiet

from advisor.cli import main
from advisor.condor.factory import read_token
from advisor.daemon.config import check_config, load_config
from advisor.daemon.explain import explain_machine
from advisor.daemon.explain_text import format_explanation
from advisor.daemon.fields import ConfigError
from advisor.daemon.runtime import Daemon, make_policy
from advisor.daemon.service_user import unreadable

TWIN = ["--pool", "sim:campus", "--days", "1", "--scale", "0.03", "--no-progress"]
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def cli(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "advisor.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def errors(stderr: str, command: str) -> list[str]:
    """The error lines of ``stderr``, without the command's prefix."""
    prefix = f"htcondor-advisor {command}: error: "
    return [line.removeprefix(prefix) for line in stderr.splitlines() if line.startswith(prefix)]


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(document))
    return path


# -- the token file ------------------------------------------------------------------------------


def test_a_missing_token_is_named_by_check_config_and_by_run(tmp_path: Path) -> None:
    token = tmp_path / "tokens.d" / "advisor.token"
    pool = {"kind": "condor", "collector": "127.0.0.1:1", "token_file": str(token)}
    config = write(tmp_path / "a.yaml", {"pool": pool, "state": {"directory": str(tmp_path)}})
    expected = (
        f"pool.token_file: '{token}' does not exist; create it as deploy/TOKENS.md shows, "
        "or set null for a pool without token"
    )
    checked = cli("check-config", str(config))
    assert checked.returncode == 2 and errors(checked.stderr, "check-config") == [expected]
    started = cli("run", "--config", str(config), "--once")
    assert started.returncode == 2 and errors(started.stderr, "run") == [expected]
    assert "Errno" not in started.stderr and "Traceback" not in started.stderr
    token.parent.mkdir()
    token.write_text("a.token\n")
    assert cli("check-config", str(config)).returncode == 0


def test_a_token_that_vanished_since_the_check_is_named_by_its_key(tmp_path: Path) -> None:
    missing = tmp_path / "gone.token"
    with pytest.raises(ConfigError, match=rf"^pool\.token_file: cannot read '{missing}' \(No such"):
        read_token(missing)
    binary = tmp_path / "binary.token"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match=r"^pool\.token_file: cannot read .*utf-8"):
        read_token(binary)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory others may pass through (pytest's own is root's alone)."""
    with tempfile.TemporaryDirectory(prefix="advisor-checks-") as name:
        os.chmod(name, 0o711)
        yield Path(name)


def nobody() -> pwd.struct_passwd:
    if os.geteuid() != 0:
        pytest.skip("files of other owners need root")
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody here")


def test_readability_is_decided_for_the_service_user_from_the_mode_bits(shared_dir: Path) -> None:
    user = nobody()
    token = shared_dir / "advisor.token"
    token.write_text("t\n")
    for owner, group, mode, readable in [
        (0, 0, 0o600, False),
        (0, 0, 0o604, True),
        (user.pw_uid, 0, 0o400, True),
        (user.pw_uid, 0, 0o044, False),  # the owner's bits decide for the owner
        (0, user.pw_gid, 0o640, True),
        (0, user.pw_gid, 0o604, False),  # the group's bits decide for a member
    ]:
        os.chown(token, owner, group)
        token.chmod(mode)
        why = unreadable(token, user)
        assert (why is None) == readable, (owner, group, oct(mode), why)
    os.chown(token, 0, 0)
    token.chmod(0o600)
    assert unreadable(token, user) == "is not readable by user nobody (root:root 0600)"
    token.chmod(0o644)
    shared_dir.chmod(0o700)
    assert unreadable(token, user) == (
        f"is not readable by user nobody: directory '{shared_dir}' (root:root 0700) "
        "does not let it through"
    )
    assert unreadable(token, None) is None  # root reads it


def check_config_as(user: pwd.struct_passwd, config: Path) -> tuple[int, str]:
    """``check-config`` run by ``user`` (exit status, stderr): a forked child that drops root,
    since this interpreter lives where only root may look and could not start as ``user``."""
    main(["check-config", str(config)])  # as root first: every module the check needs loaded
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become the user, check, report; never back into pytest
        code, err = 70, io.StringIO()
        try:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = main(["check-config", str(config)])
        except BaseException:
            traceback.print_exc(file=err)
        finally:
            os.write(write, err.getvalue().encode())
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as pipe:
        stderr = pipe.read()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), stderr


def test_check_config_as_another_user_names_a_token_it_cannot_read(shared_dir: Path) -> None:
    user = nobody()
    token = shared_dir / "advisor.token"
    token.write_text("t\n")
    token.chmod(0o600)  # root's: as deploy/TOKENS.md says, it must be the service user's
    pool = {"kind": "condor", "collector": "cm", "token_file": str(token), "journal": False}
    policy, state = {"name": "frugal"}, {"directory": "/nowhere"}  # (random would be warned of)
    config = write(shared_dir / "a.yaml", {"pool": pool, "policy": policy, "state": state})
    config.chmod(0o644)
    code, stderr = check_config_as(user, config)
    assert code == 2, stderr
    assert errors(stderr, "check-config") == [
        f"pool.token_file: '{token}' is not readable by user nobody (root:root 0600); "
        "give it to that user as deploy/TOKENS.md shows"
    ]
    os.chown(token, user.pw_uid, user.pw_gid)
    assert check_config_as(user, config) == (0, "")


# -- every mistake at once -----------------------------------------------------------------------

MANY: dict[str, Any] = {
    "pool": {"kind": "condor", "collector": "cm:9618", "merge": "maybe", "token_file": "/no/t"},
    "policy": {"name": "nope", "options": {"epsilon": "x"}},
    "publish": {"interval": "soon", "stale_after": "10s"},
    "state": {"keep": 0},
    "logging": {"level": "LOUD"},
    "extra": 1,
}


def test_check_config_and_run_name_every_mistake_one_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write(tmp_path / "a.yaml", {**MANY, "state": {**MANY["state"], "directory": "st"}})
    keys = [
        "extra",
        "pool.merge",
        "publish.interval",
        "state.directory",
        "state.keep",
        "logging.level",
        "policy.name",  # its options cannot be checked without it: no policy.options line
        "publish.stale_after",
        "pool.token_file",
    ]
    for command in (["check-config", str(config)], ["run", "--config", str(config), "--once"]):
        assert main(command) == 2
        out, err = capsys.readouterr()
        lines = errors(err, command[0])
        assert out == "" and len(lines) == len(err.splitlines()), err
        assert [line.split(": ", 1)[0] for line in lines] == keys, err
    with pytest.raises(ConfigError) as info:
        load_config(config)  # callers still get one ConfigError, a line per mistake
    assert len(str(info.value).splitlines()) == len(keys)


def test_a_reload_logs_every_mistake_on_its_one_line(tmp_path: Path) -> None:
    twin = {"pool": {"kind": "sim"}, "state": {"directory": str(tmp_path / "state")}}
    path = write(tmp_path / "a.yaml", twin)
    config = load_config(path)
    daemon = Daemon(config, make_policy(config, {}), Quiet(), [], lambda: 1000.0)
    write(path, {**twin, "publish": {"interval": "soon"}, "state": {"keep": 0}})
    records = Records()
    logging.getLogger("htcondor_advisor").addHandler(records)
    try:
        assert not daemon.reload(path, {}, None)
    finally:
        logging.getLogger("htcondor_advisor").removeHandler(records)
    [record] = [r for r in records.records if r.levelno >= logging.ERROR]
    message = record.getMessage()
    assert "\n" not in message
    assert message.endswith(
        "keeping the running configuration: publish.interval: must be seconds or a duration "
        "like 90s, 5m, 1h, 2d, got 'soon'; state.keep: must be an integer from 1 to 1000, got 0"
    )


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


# -- values ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "address"),
    [
        ("cm.example.org", ("cm.example.org", 9618)),
        ("10.0.0.5", ("10.0.0.5", 9618)),
        ("[::1]", ("::1", 9618)),
        ("cm.example.org:9620", ("cm.example.org", 9620)),
        ("[::1]:9620", ("::1", 9620)),
    ],
)
def test_a_collector_without_port_gets_htcondors_default(
    given: str, address: tuple[str, int]
) -> None:
    assert check_config({"pool": {"kind": "condor", "collector": given}}).pool["collector"] == (
        address
    )


@pytest.mark.parametrize("given", ["cm:0", "cm:x", "a host", "cm:99999"])
def test_a_collector_that_is_no_address_is_named(given: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_config({"pool": {"kind": "condor", "collector": given}})
    assert str(info.value) == (
        "pool.collector: must be HOST or HOST:PORT with a port 1-65535, e.g. "
        f"cm.example.org:9618, got {given!r}"
    )


def test_the_state_directory_is_absolute_and_so_is_its_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError) as info:
        check_config({"pool": {"kind": "sim"}, "state": {"directory": "advisor-state"}})
    assert str(info.value) == (
        "state.directory: 'advisor-state' is relative; give an absolute path such as "
        "/var/lib/htcondor-advisor"
    )
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert check_config({"pool": {"kind": "sim"}}).state["directory"] == tmp_path / "advisor-state"
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/htcondor-advisor")  # systemd's
    assert check_config({"pool": {"kind": "sim"}}).state["directory"] == Path(
        "/var/lib/htcondor-advisor"
    )


def test_the_twin_takes_relative_paths_typed_on_its_command_line(tmp_path: Path) -> None:
    done = cli("run", *TWIN, "--listen", "127.0.0.1:0", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "out" / "state").glob("snapshot-*.json"))
    done = cli("run", *TWIN, "--listen", "127.0.0.1:0", "--state-dir", "st", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "st").glob("snapshot-*.json"))


# -- a port another process holds ----------------------------------------------------------------


@pytest.fixture
def held_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.mark.parametrize("pool", ["sim", "condor"])
def test_a_held_port_from_the_file_names_the_key(tmp_path: Path, held_port: int, pool: str) -> None:
    kinds: dict[str, dict[str, object]] = {
        "sim": {"kind": "sim", "days": 1, "scale": 0.03},
        "condor": {"kind": "condor"},
    }
    document = {
        "pool": {**kinds[pool], **({"collector": "127.0.0.1:1"} if pool == "condor" else {})},
        "publish": {"listen": f"127.0.0.1:{held_port}"},
        "state": {"directory": str(tmp_path / "state")},
    }
    done = cli("run", "--config", str(write(tmp_path / "a.yaml", document)), "--no-progress")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert errors(done.stderr, "run") == [
        f"publish.listen: 127.0.0.1:{held_port} is in use (another htcondor-advisor?); "
        "choose another port"
    ]


def test_a_held_port_given_on_the_command_line_names_the_option(
    tmp_path: Path, held_port: int
) -> None:
    done = cli("run", *TWIN, "--state-dir", str(tmp_path), "--listen", f"127.0.0.1:{held_port}")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert errors(done.stderr, "run") == [
        f"--listen: 127.0.0.1:{held_port} is in use (another htcondor-advisor?); "
        "choose another port"
    ]


# -- a pool that does not answer, and the times messages show ------------------------------------


def test_run_once_fails_fast_when_the_pool_does_not_answer(tmp_path: Path) -> None:
    document = {
        "pool": {"kind": "condor", "collector": "127.0.0.1:1"},
        "state": {"directory": str(tmp_path)},
    }
    began = time.monotonic()
    done = cli("run", "--config", str(write(tmp_path / "a.yaml", document)), "--once")
    assert time.monotonic() - began < 30
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert errors(done.stderr, "run") == [
        "pool.collector: the pool did not answer at 127.0.0.1:1; check that its collector runs "
        "there and lets this host read"
    ]
    assert re.search(rf"pool did not answer at {ISO}; advice will lapse", done.stderr)


def test_explanations_show_times_in_iso_8601() -> None:
    advice = {
        "rank": 1.0,
        "rank_by_prior_hours": None,
        "hold": False,
        "predicted_idle_s": None,
        "power": "on",
        "updated": 1795581000.0,
        "expires": 1795581540.0,
        "policy": "random/1",
    }
    event = {"kind": "OwnerSessionStarted", "time": 1795581480.2, "machine": "m"}
    state = {"policy": {"label": "random/1", "state": {}}, "recent": {"m": [event]}}
    text = format_explanation(explain_machine("m", state, advice, 1795581500.0, {}))
    assert re.search(r"AdvisorExpires +2026-11-25T04:39:00Z \(in 40 s\)", text)
    assert "  2026-11-25T04:38:00Z to now  20 s so far" in text


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({}, "policy.options.agent: policy 'or-ppo' needs a trained agent"),
        ({"agent": "/nowhere/agent.npz"}, "policy.options.agent: agent '/nowhere/agent.npz': no"),
    ],
)
def test_check_config_names_a_missing_power_agent(options: dict[str, str], said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        check_config({"pool": {"kind": "sim"}, "policy": {"name": "or-ppo", "options": options}})
    assert str(raised.value).startswith(said)
    assert "train-power" in str(raised.value)


def test_check_config_takes_a_shipped_power_agent_by_its_name() -> None:
    config = check_config(
        {"pool": {"kind": "sim"}, "policy": {"name": "or-ppo", "options": {"agent": "nasa"}}}
    )
    assert config.policy["options"]["agent"] == "nasa"


def test_check_config_shows_policy_options_as_set_would_give_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = {"keep_off_hours": 12, "payback": "off"}
    document = {"pool": {"kind": "sim"}, "policy": {"name": "frugal", "options": options}}
    assert main(["check-config", str(write(tmp_path / "a.yaml", document))]) == 0
    assert "  policy   frugal keep_off_hours=12 payback=off\n" in capsys.readouterr().out
