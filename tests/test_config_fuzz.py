"""Mutated configurations, as an editor's slip or a bad disk makes them: ``check-config`` and a
running daemon's SIGHUP reload meet each with one located line, and the daemon keeps serving."""

from __future__ import annotations

import contextlib
import io
import ipaddress
import json
import logging
import random
import re
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import yaml
from configkit import Quiet, example_with_token
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.cli import main
from advisor.daemon.config import SECTIONS, load_config
from advisor.daemon.fields import ConfigError
from advisor.daemon.runtime import Daemon, make_policy
from advisor.lab.daemon_process import DaemonProcess

SCALARS = [
    ".inf", "-.inf", ".nan", ".NaN", "-1", "0", "1e400", "-0.0", "99999999999999999999999999",
    "1" * 5000, "2024-13-45", "2024-02-30 25:00:00", "null", "~", "true", "no", "[]", "{}",
    "[1, [2, [3]]]", "{a: 1}", "x", "''", '"\\x07"', '"a\\nb"', "!!binary '@@'", "!!int x",
    "!!float y", "!!python/object:os.system ls", "&a 1", "*a", "*nowhere", "'unterminated",
    '"unterminated', "0x1F", "0o777", "1_000", "12:30:00", "10m", "1.5h", "2d", "5 m", "max",
    "DEBUG", "random", "crystal", "cm:9618", "[::1]:0", "127.0.0.1:99999", "/etc/passwd", "/tmp",
    "? [1]", "<<: 1", "- a", "|\n  block", "a: b: c", "\t1",
]  # fmt: skip
CONTROL = [chr(c).encode() for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]]
CONTROL += [chr(c).encode() for c in (0x80, 0x9B, 0xFFFE)]  # C1 controls and a noncharacter
NOT_UTF8 = [b"\x80", b"\xc3", b"\xe9", b"\xff", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]


def mutate(data: bytes, edits: list[tuple[str, int, int]], keep: Callable[[bytes], bool]) -> bytes:
    """Apply ``edits`` (what, where, which) to ``data``; lines ``keep`` refuses are left alone."""
    for what, where, which in edits:
        lines = data.split(b"\n")
        i = where % len(lines)
        if not keep(lines[i]):
            continue
        line = lines[i]
        if what == "byte" and line:
            j = which % len(line)
            lines[i] = line[:j] + bytes([which % 256]) + line[j + 1 :]
        elif what == "control":
            j = which % (len(line) + 1)
            lines[i] = line[:j] + CONTROL[which % len(CONTROL)] + line[j:]
        elif what == "not-utf8":
            j = which % (len(line) + 1)
            lines[i] = line[:j] + NOT_UTF8[which % len(NOT_UTF8)] + line[j:]
        elif what == "duplicate":
            lines.insert(i, line)
        elif what == "delete":
            del lines[i]
        elif what == "scalar" and b":" in line:
            key = line.split(b":", 1)[0]
            lines[i] = key + b": " + SCALARS[which % len(SCALARS)].encode()
        elif what == "rename" and b":" in line:
            key, rest = line.split(b":", 1)
            lines[i] = key + b"xyz"[: 1 + which % 3] + b":" + rest
        elif what == "indent":
            lines[i] = b" " * (which % 5) + line.lstrip(b" ")
        data = b"\n".join(lines)
    return data


KINDS = ["byte", "control", "not-utf8", "duplicate", "delete", "scalar", "rename", "indent"]
EDITS = st.lists(
    st.tuples(st.sampled_from(KINDS), st.integers(0, 10_000), st.integers(0, 10_000)),
    min_size=1,
    max_size=4,
)


def located(message: str, path: Path) -> bool:
    """One line that starts with the file (and line:column) or a key path."""
    if "\n" in message or "\r" in message or "Traceback" in message:
        return False
    if message.startswith(f"{path}:") or message.startswith(f"{path} "):
        return True
    if ": unknown section; allowed: " in message:
        return True  # the section's name is the path
    head = message.split(": ", 1)[0].split(".", 1)[0]
    return head in {"pool", *SECTIONS}


_real_getaddrinfo = socket.getaddrinfo


def _offline_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    """Numeric addresses and localhost resolve as usual; a name fails as it would without DNS
    (the fuzz must not wait on name servers), after the IDNA encoding a real lookup does."""
    if isinstance(host, str):
        with contextlib.suppress(ValueError):
            ipaddress.ip_address(host)
            return _real_getaddrinfo(host, *args, **kwargs)
        if host != "localhost":
            host.encode("idna")
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return _real_getaddrinfo(host, *args, **kwargs)


@contextlib.contextmanager
def offline() -> Iterator[None]:
    with mock.patch("socket.getaddrinfo", _offline_getaddrinfo):
        yield


def test_the_example_is_valid(tmp_path: Path) -> None:
    load_config(example_with_token(tmp_path))  # its token exists once deployed


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=EDITS)
def test_check_config_meets_any_mutation_with_one_located_line(
    tmp_path_factory: Any, edits: list[tuple[str, int, int]]
) -> None:
    path = example_with_token(tmp_path_factory.mktemp("fuzz"))
    path.write_bytes(mutate(path.read_bytes(), edits, lambda line: True))
    with offline():
        try:
            load_config(path)
        except ConfigError as exc:  # every mistake at once: each line one error
            errors = str(exc).split("\n")
            assert all(located(error, path) for error in errors), str(exc)
            assert all(len(error) < 2000 for error in errors), str(exc)
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(["check-config", str(path)])
    assert code in (0, 2)
    if code == 2:
        lines = err.getvalue().splitlines()
        assert lines and all(
            line.startswith("htcondor-advisor check-config: error: ") for line in lines
        )
        assert all(located(line.split(": error: ", 1)[1], path) for line in lines), lines
    else:
        assert out.getvalue().startswith(f"{path}: ok")


TWIN: dict[str, dict[str, Any]] = {
    "pool": {"kind": "sim", "days": 3, "scale": 0.05, "seed": 3, "speed": 2000},
    "policy": {"name": "random", "seed": None, "options": {}},
    "publish": {"listen": "127.0.0.1:0", "advice_lifetime": "1h", "interval": "60s"},
    "learning": {"observe_interval": "60s", "retrain": "0 0 1 * *"},
    "state": {"snapshot_interval": "1d", "keep": 5},
    "metrics": {"enabled": True},
    "logging": {"level": "INFO"},
}
VALID_EDITS = [  # reloads that are accepted, between the broken ones
    [("scalar", 12, SCALARS.index("10m"))],  # advice_lifetime
    [("scalar", 13, SCALARS.index("1.5h"))],  # interval
    [("scalar", 7, SCALARS.index("random"))],  # policy.name, unchanged
]


def _twin_config(state: Path) -> bytes:
    config = {**TWIN, "state": {**TWIN["state"], "directory": str(state)}}
    return yaml.safe_dump(config, sort_keys=False).encode()


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=EDITS)
def test_reload_meets_any_mutation_by_keeping_the_configuration(
    tmp_path_factory: Any, edits: list[tuple[str, int, int]]
) -> None:
    work = tmp_path_factory.mktemp("reload")
    path = work / "advisor.yaml"
    original = _twin_config(work / "state")
    path.write_bytes(original)
    config = load_config(path)
    daemon = Daemon(config, make_policy(config, {}), Quiet(), [], lambda: 1000.0)
    path.write_bytes(mutate(original, edits, lambda line: True))
    records = Records()
    logger = logging.getLogger("htcondor_advisor")
    logger.addHandler(records)
    try:
        with offline():
            reloaded = daemon.reload(path, {}, None)
    finally:
        logger.removeHandler(records)
    if reloaded:
        assert daemon.reloads == 1 and daemon.config is not config
        return
    assert daemon.config is config and daemon.reloads == 0
    errors = [r for r in records.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    message = errors[0].getMessage()
    assert "\n" not in message and "keeping the running configuration" in message
    assert located(message.split("keeping the running configuration: ", 1)[1], path), message


LOG_LINE = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")


def test_sighup_survives_mutated_configurations(tmp_path: Path) -> None:
    """A running twin reloads 30 mutated files (every kind of mutation, and some valid edits):
    each refused one is one logged line, and the daemon keeps serving throughout."""
    path = tmp_path / "advisor.yaml"
    original = _twin_config(tmp_path / "state")
    path.write_bytes(original)
    rng = random.Random(11)
    plans = [
        [(KINDS[i % len(KINDS)], rng.randrange(10_000), rng.randrange(10_000))]
        + [(rng.choice(KINDS), rng.randrange(10_000), rng.randrange(10_000))] * (i % 2)
        for i in range(27)
    ]
    for i, edits in enumerate(VALID_EDITS):
        plans.insert(7 * i + 3, edits)
    daemon = DaemonProcess(["--config", str(path)])
    daemon.wait_for(lambda: daemon.address and json.loads(daemon.get("/healthz")[2]))
    seen = {"refused": 0, "reloads": 0}

    def answered() -> dict | None:
        status, _, body = daemon.get("/healthz")
        return json.loads(body) if status == 200 else None

    try:
        for edits in plans:
            # a new listen address needs a restart anyway; keep name lookups out of the test
            path.write_bytes(mutate(original, edits, lambda line: b"listen" not in line))
            daemon.proc.send_signal(signal.SIGHUP)

            def handled() -> bool:
                health = answered()
                return daemon.log().count("reload of") > seen["refused"] or (
                    health is not None and health["reloads"] > seen["reloads"]
                )

            daemon.wait_for(handled, timeout=30)
            health = daemon.wait_for(answered, timeout=30)
            seen["refused"], seen["reloads"] = daemon.log().count("reload of"), health["reloads"]
        assert seen["refused"] >= 15 and seen["reloads"] >= len(VALID_EDITS), seen
        assert daemon.proc.poll() is None and answered() is not None
    finally:
        daemon.proc.send_signal(signal.SIGINT)
        code = daemon.finish()
    log = daemon.log()
    assert code == 0, log
    assert "Traceback" not in log
    for line in log.splitlines():
        assert LOG_LINE.match(line), f"not one line per record: {line!r}"
    for line in log.splitlines():
        if "reload of" in line:
            assert line.startswith("ERROR ") and "keeping the running configuration: " in line
            assert located(line.split("keeping the running configuration: ", 1)[1], path), line
