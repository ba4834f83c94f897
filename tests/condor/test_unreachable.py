"""A collector that does not answer: the source keeps going, says unhealthy, and backs off."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.condor.factory import build_condor_pool
from advisor.condor.retry import Backoff


def test_source_is_unhealthy_while_the_collector_is_down() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    source, sinks = build_condor_pool({"collector": f"127.0.0.1:{port}"})
    assert sinks == []
    first = source.poll(1000.0)
    assert not first.healthy and first.events == [] and first.view.machines == []
    assert not source.poll(1001.0).healthy  # within the backoff: not even tried
    assert source.cursor()["schedds"] == {}


def test_backoff_doubles_and_recovers() -> None:
    calls: list[float] = []

    def flaky() -> str:
        calls.append(0.0)
        if len(calls) < 3:
            raise OSError("connection refused")
        return "ok"

    backoff = Backoff("collector", base=5.0, cap=8.0)
    assert backoff.call(flaky, 0.0) is None and backoff.next_try == 5.0
    assert backoff.call(flaky, 4.0) is None and len(calls) == 1  # too early
    assert backoff.call(flaky, 5.0) is None and backoff.next_try == 13.0  # 10 s capped at 8
    assert not backoff.healthy
    assert backoff.call(flaky, 13.0) == "ok" and backoff.healthy and backoff.next_try == 0.0


def test_a_pool_sweep_without_a_schedd_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import htcondor2

    with socket.socket() as sock:  # a collector nobody runs
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setitem(htcondor2.param, "COLLECTOR_HOST", f"127.0.0.1:{port}")
    argv = ["experiment", "levels", "--scale", "0.02", "--days", "2", "--epsilons", "0.1"]
    argv += ["--sigmas", "0.4", "--out", str(tmp_path), "--executor", "condor"]
    assert main([*argv, "--schedd", "submit.example.org"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("htcondor-advisor experiment: error: --executor condor: cannot reach")
    assert "--schedd" in line
