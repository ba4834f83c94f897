"""A collector that does not answer: the source keeps going, says unhealthy, and backs off."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.condor.bounded_calls import BoundedCalls, RemoteCollector, RemoteSchedd
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
    assert line.startswith(
        "htcondor-advisor experiment levels: error: --executor condor: cannot reach"
    )
    assert "--schedd" in line


@contextlib.contextmanager
def silent_daemon() -> Iterator[int]:
    """A port on loopback that accepts connections and never answers: a daemon that hangs
    (a stopped process, a deadlock), which the bindings wait on holding the GIL."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield listener.getsockname()[1]


def test_a_hung_collector_or_schedd_costs_the_deadline_and_never_freezes_the_daemon() -> None:
    # a real call through the bindings: the daemon's other threads (the hooks' endpoint) run
    # while it waits, it ends at the deadline naming the key to raise, and the next call works
    import classad2
    import htcondor2

    calls = BoundedCalls(deadline_s=3.0)
    ticks = 0
    done = threading.Event()

    def endpoint() -> None:
        nonlocal ticks
        while not done.wait(0.01):
            ticks += 1

    with silent_daemon() as port:
        thread = threading.Thread(target=endpoint)
        thread.start()
        collector = RemoteCollector(calls, f"127.0.0.1:{port}")
        with pytest.raises(TimeoutError, match=r"no answer within 3 s, pool\.call_timeout_s"):
            collector.query(htcondor2.AdTypes.Startd, projection=["Name"])
        done.set()
        thread.join()
        assert ticks > 100  # the other thread ran through most of the 3 s (the GIL was free)
        version = "$CondorVersion: 25.0.0 2025-01-01 $"  # as a located schedd ad has it
        address = f"<127.0.0.1:{port}>"
        location = classad2.ClassAd(
            {"Name": "hung", "MyAddress": address, "CondorVersion": version}
        )
        schedd = RemoteSchedd(calls, location)
        with pytest.raises(TimeoutError, match="no answer within 3 s"):
            schedd.edit(["1.0"], "JobPrio", "1")  # the bindings' own wait here has no end
    with socket.socket() as sock:  # then nobody listens: the bindings' own error, in time
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    nobody = RemoteCollector(calls, f"127.0.0.1:{port}")
    with pytest.raises(RuntimeError, match="Failed communication with collector"):
        nobody.query(htcondor2.AdTypes.Startd, ["Name"])
    calls._child.kill()  # the process making the calls dies (out of memory, killed)
    calls._child.join()
    with pytest.raises(RuntimeError, match="the process making the call ended"):
        nobody.query(htcondor2.AdTypes.Startd, ["Name"])
    with pytest.raises(RuntimeError, match="Failed communication with collector"):
        nobody.query(htcondor2.AdTypes.Startd, ["Name"])  # a new one made it
    calls.stop()
