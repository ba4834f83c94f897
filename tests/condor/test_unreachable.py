"""A collector that does not answer: the source keeps going, says unhealthy, and backs off."""

from __future__ import annotations

import socket

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
