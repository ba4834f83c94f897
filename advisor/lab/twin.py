"""The digital twin: the daemon run against the simulated pool in accelerated time.

The simulator's negotiator asks for advice whenever it negotiates; in the twin that request runs
one daemon cycle (poll the twin, feed events, advise, stamp, publish to every sink) and the
negotiator applies what was published to the twin's sink. So a twin run makes exactly the
policy calls a replay makes, and ends with the same figures.

The clock is the simulation engine (SimPy-style injected clock): snapshot, retrain, pacing and
signals are handled between two simulated instants. A run that resumes from a snapshot rebuilds
the simulated pool up to the snapshot's time by deterministic re-simulation (with a fresh copy of
the policy), then hands over to the restored policy: the world is as it was, and learning
continues from the snapshot.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from advisor.daemon.host import EMPTY_VIEW, PolicyHost
from advisor.daemon.metrics import DaemonMetrics
from advisor.ports import Observation
from plugins.contract.advice import Advice
from plugins.contract.events import Event
from plugins.contract.ledger import AdviceLedger
from plugins.contract.policy import MachineInfo, Policy, PoolView

log = logging.getLogger("htcondor_advisor.twin")
IDENTITY_KEYS = ("scenario", "scenario_config", "days", "scale", "seed")


class TwinPool:
    """The simulated pool behind the daemon's ports: a ``PoolSource`` and an ``AdviceSink``."""

    name = "twin"

    def __init__(self, settings: Mapping[str, Any], machines: Mapping[str, MachineInfo]) -> None:
        self.identity = {
            k: str(settings[k]) if k == "scenario_config" and settings[k] else settings[k]
            for k in IDENTITY_KEYS
        }
        self.machines = machines
        self.buffer: list[Event] = []
        self.view: PoolView = EMPTY_VIEW
        self.clock: Any = lambda: 0.0
        self.resume_at: float | None = None
        self.delivered = False
        self.cache: AdviceLedger | None = None
        """The negotiator's advice cache (its lifetime follows ``publish.advice_lifetime``)."""

    def emit(self, event: Event) -> None:
        self.buffer.append(event)

    def poll(self, now: float) -> Observation:
        events, self.buffer = self.buffer, []
        return Observation(events, self.view, self.machines)

    def cursor(self) -> dict[str, Any]:
        return {"kind": "sim", **self.identity, "time": self.clock()}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        saved = {k: cursor.get(k) for k in IDENTITY_KEYS}
        if cursor.get("kind") != "sim" or saved != self.identity:
            raise ValueError(
                f"snapshot is of another pool ({saved}), configured is {self.identity}"
            )
        self.resume_at = float(cursor["time"])

    def publish(self, advice: Advice, now: float) -> None:
        self.delivered = True


class NegotiatorBridge:
    """What the simulator's negotiator asks in the twin (an ``AdviceSource``): one negotiation =
    one daemon cycle; the answer is what the daemon published to the twin."""

    def __init__(self, twin: TwinPool) -> None:
        self.twin = twin
        self.host: PolicyHost | None = None

    @property
    def ASKS_ONLY_WHEN_FREED(self) -> bool:
        """Asked as the host's policy would be, so the twin makes a replay's calls."""
        return self.host is not None and self.host.policy.ASKS_ONLY_WHEN_FREED

    def advise(self, view: PoolView, now: float) -> Advice:
        """Run one cycle; the negotiator gets what reached the twin's sink (nothing on a dry run
        or a failed publish). It gets the policy's own advice objects, before the expiry stamp:
        its cache applies the same lifetime, and it groups machines by advice identity."""
        twin, host = self.twin, self.host
        assert host is not None
        twin.view, twin.delivered = view, False
        host.cycle(now)
        twin.view = EMPTY_VIEW
        return host.decided if twin.delivered else Advice()


def next_cron(trigger: CronTrigger, t: float) -> float:
    """The first firing of ``trigger`` strictly after ``t`` (simulated seconds)."""
    after = dt.datetime.fromtimestamp(t, dt.UTC) + dt.timedelta(seconds=1)
    fire = trigger.get_next_fire_time(None, after)
    return float("inf") if fire is None else fire.timestamp()


class Stopped(Exception):
    """Raised between two simulated instants when a stop was requested."""


@dataclass
class Pace:
    """``speed`` simulated seconds per wall second from ``(sim0, wall0)``; None: no waiting."""

    speed: float | None
    sim0: float = 0.0
    wall0: float = 0.0

    def restart(self, sim: float) -> None:
        self.sim0, self.wall0 = sim, time.monotonic()

    def wait_for(self, sim: float, interrupted: Any) -> None:
        if self.speed is None:
            return
        due = self.wall0 + (sim - self.sim0) / self.speed
        while (left := due - time.monotonic()) > 0 and not interrupted():
            time.sleep(min(left, 0.05))


def shadow_host(policy: Policy, twin: TwinPool, lifetime_s: float, clock: Any) -> PolicyHost:
    """A host for re-simulating the pool up to a snapshot (its learning is thrown away)."""
    return PolicyHost(policy, twin, [twin], DaemonMetrics(clock), lifetime_s)
