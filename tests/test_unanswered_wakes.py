"""A sleeping machine that does not wake when advised is left out a while (unanswered_wakes.py)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from advisor.daemon.config import check_config
from advisor.daemon.runtime import Daemon
from advisor.daemon.unanswered_wakes import WAKE_ANSWER_S, WAKE_RETRY_S
from advisor.ports import Observation
from plugins.contract.advice import Advice, PowerAdvice
from plugins.contract.policy import MachineInfo, MachineView, PolicyContext, PoolView
from plugins.power.timeout import TimeoutPolicy


class AsleepPool:
    """Two sleeping machines and one waiting job: the power policy wakes one machine for it."""

    view = PoolView([MachineView(n, "sleep", 0.0) for n in ("dead", "fine")], [1] + [0] * 23)

    def poll(self, now: float) -> Observation:
        machines = {
            m.name: MachineInfo(m.name, "lab", "Normal", 57, 40, 2) for m in self.view.machines
        }
        return Observation([], self.view, machines)

    def cursor(self) -> dict[str, Any]:
        return {}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        pass


class ReachesSleeping:
    """Records what it is given; like the collector merge, it reaches sleeping machines."""

    name = "recorder"
    reaches_sleeping = True

    def __init__(self) -> None:
        self.last = Advice()

    def publish(self, advice: Advice, now: float) -> None:
        self.last = advice

    def woken(self) -> list[str]:
        return sorted(m for m, a in self.last.machines.items() if a.power is PowerAdvice.WAKE)


def make_daemon(directory: Path, sink: ReachesSleeping) -> Daemon:
    config = check_config(
        {
            "pool": {"kind": "condor", "collector": "cm:9618"},
            "publish": {"listen": "127.0.0.1:0", "advice_lifetime": 300},
            "state": {"directory": str(directory)},
        }
    )
    policy = TimeoutPolicy(PolicyContext({}), {"t": 60.0})
    return Daemon(config, policy, AsleepPool(), [sink], lambda: 0.0)


def test_a_machine_that_never_wakes_gives_its_wake_to_the_next_after_a_while(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, "dead" (first by name) was advised "wake" every minute while "fine" slept on and
    the job waited, for as long as the collector kept the offline ad: forever by default."""
    sink = ReachesSleeping()
    daemon = make_daemon(tmp_path, sink)
    start = 10_000.0
    with caplog.at_level(logging.WARNING):
        for t in range(0, int(WAKE_ANSWER_S), 60):
            daemon.host.cycle(start + t)
            assert sink.woken() == ["dead"]
        daemon.host.cycle(start + WAKE_ANSWER_S)
    said = [r.message for r in caplog.records if "still asleep" in r.message]
    assert len(said) == 1 and said[0].startswith("dead was advised to wake 15 minutes ago")
    assert b"advisor_machines_unwakeable 1.0" in daemon.metrics.exposition()
    daemon.host.cycle(start + WAKE_ANSWER_S + 60)
    assert "fine" in sink.woken()
    later = start + WAKE_ANSWER_S + 400  # "dead"'s last wake has lapsed
    daemon.host.cycle(later)
    assert sink.woken() == ["fine"]

    daemon.snapshot(later)  # a restart keeps what it gave up on
    sink = ReachesSleeping()
    fresh = make_daemon(tmp_path, sink)
    assert fresh.resume() is not None
    fresh.host.cycle(later + 60)
    assert sink.woken() == ["fine"]
    fresh.host.cycle(start + WAKE_ANSWER_S + WAKE_RETRY_S)  # tried again: it may be mended
    assert sink.woken() == ["dead"]
