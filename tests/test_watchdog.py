"""systemd's watchdog: pings while the timetable's jobs come and go, none once one hangs."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from advisor.daemon.schedule import run_live
from advisor.daemon.signals import Control
from advisor.daemon.watchdog import Liveness, Watchdog, watchdog_interval


def test_the_interval_is_half_of_what_systemd_asks_and_only_for_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "600000000")
    assert watchdog_interval() == 300.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 300.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))  # the parent's, passed on
    assert watchdog_interval() is None


def test_a_job_running_past_the_whole_watchdog_time_stops_the_pings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    liveness = Liveness(clock=lambda: now[0])
    pings: list[float] = []
    dog = Watchdog(liveness, 10.0, lambda: pings.append(now[0]))
    release = threading.Event()
    entered = threading.Event()

    def hangs() -> None:
        entered.set()
        release.wait(10)

    job = threading.Thread(target=liveness.watched("publish", hangs))
    for t in range(0, 25):  # a tick a second; the job starts at 5 s
        now[0] = float(t)
        if t == 5:
            job.start()
            entered.wait(10)
        dog.tick()
    assert pings == [0.0, 10.0, 20.0]  # running 15 s < 20 s: not stuck yet
    with caplog.at_level(logging.ERROR, "htcondor_advisor.watchdog"):
        for t in range(25, 40):
            now[0] = float(t)
            dog.tick()
    assert pings == [0.0, 10.0, 20.0]  # at 30 s, when the next is due, it has run 25 s
    assert [r.getMessage() for r in caplog.records] == [
        "job running too long (publish for 25 s): no watchdog ping, systemd restarts"
    ]
    release.set()
    job.join(10)
    now[0] = 40.0
    dog.tick()
    assert pings[-1] == 40.0 and liveness.stuck(0.0) == {}


def test_a_job_that_stops_coming_stops_the_pings(caplog: pytest.LogCaptureFixture) -> None:
    """The timetable counts by the wall clock: stepped back an hour, it started no job for an
    hour, and the pings went on while every machine's advice lapsed."""
    now = [0.0]
    liveness = Liveness(clock=lambda: now[0])
    liveness.expect("observe", 60.0)
    observe = liveness.watched("observe", lambda: None)
    pings: list[float] = []
    dog = Watchdog(liveness, 30.0, lambda: pings.append(now[0]))
    with caplog.at_level(logging.ERROR, "htcondor_advisor.watchdog"):
        for t in range(0, 420, 30):
            now[0] = float(t)
            if t in (0, 60, 390):  # then the clock steps back: nothing until 390 s
                observe()
            dog.tick()
    assert pings == [float(t) for t in range(0, 330, 30)] + [390.0]  # due again at 60 + 240
    assert [r.getMessage() for r in caplog.records] == [
        "job not started (observe for 270 s): no watchdog ping, systemd restarts"
    ]


def test_the_live_loop_pings_the_notify_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_daemon_host import make_daemon

    daemon, _ = make_daemon(tmp_path, [1000.0])
    daemon.config.publish["interval"] = 0.1
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as systemd:
        systemd.bind(str(path))
        systemd.settimeout(20)
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        monkeypatch.setenv("WATCHDOG_USEC", "400000")  # a ping every 0.2 s
        control = Control()
        runner = threading.Thread(target=run_live, args=(daemon, control, lambda: None, time.time))
        runner.start()
        try:
            messages = [systemd.recv(200).decode() for _ in range(4)]
        finally:
            control.stop.set()
            runner.join(20)
    assert messages[0].startswith("READY=1")
    assert messages[1:] == ["WATCHDOG=1"] * 3
