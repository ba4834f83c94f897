"""The digital twin: the daemon run against the simulated pool in accelerated time.

The simulator's negotiator asks for advice whenever it negotiates; in the twin that request runs
one daemon cycle (poll the twin, feed events, advise, take the answer into the daemon's advice
ledger, publish to every sink), and the negotiator reads that same ledger: what the daemon
publishes is what the simulated pool matches by, decoded once. So a twin run makes exactly the
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from advisor.daemon.host import EMPTY_VIEW, PolicyHost
from advisor.daemon.metrics import DaemonMetrics
from advisor.ports import Observation, PoolSource
from plugins.contract.advice import Advice
from plugins.contract.events import Event
from plugins.contract.ledger import AdviceLedger, Taken
from plugins.contract.policy import MachineInfo, Policy, PoolView
from simulator.campus.advice_source import Resolved

log = logging.getLogger("htcondor_advisor.twin")
IDENTITY_KEYS = (
    "scenario",
    "scenario_config",
    "days",
    "scale",
    "seed",
    "reboot_hour",
    "wait_bound",
)
BEFORE_THE_KEY = {"reboot_hour": 3.0, "wait_bound": None}
"""What a snapshot written before a key existed had: the campus rebooted at 03:00, no bound."""


class TwinPool:
    """The simulated pool behind the daemon's ports: a ``PoolSource`` and an ``AdviceSink``."""

    name = "twin"
    publishes_jobs = True
    """The negotiator applies the job advice of each cycle too (``NegotiatorBridge.resolve``)."""
    reaches_sleeping = True
    """And it wakes the sleeping machines the advice says to."""

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

    def emit(self, event: Event) -> None:
        self.buffer.append(event)

    def poll(self, now: float) -> Observation:
        events, self.buffer = self.buffer, []
        return Observation(events, self.view, self.machines)

    def cursor(self) -> dict[str, Any]:
        return {"kind": "sim", **self.identity, "time": self.clock()}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        saved = {k: cursor.get(k, BEFORE_THE_KEY.get(k)) for k in IDENTITY_KEYS}
        if cursor.get("kind") != "sim" or saved != self.identity:
            raise ValueError(
                f"snapshot is of another pool ({saved}), configured is {self.identity}; "
                "use another state directory (--out or --state-dir), or that pool's settings"
            )
        self.resume_at = float(cursor["time"])

    def publish(self, advice: Advice, now: float) -> None:
        self.delivered = True


class NegotiatorBridge:
    """What the simulator's negotiator asks in the twin (an ``AdviceSource``): one negotiation =
    one daemon cycle; the negotiator reads the daemon's own ledger, unless nothing reaches the
    twin's sink (a dry run) or the control group's guard withholds advice, when the pool sees no
    advice at all.

    The daemon numbers machines as they join, and the twin shows them all at once in the
    inventory's order, so the ledger's numbers are the simulated pool's."""

    def __init__(self, twin: TwinPool) -> None:
        self.twin = twin
        self.host: PolicyHost | None = None
        self.unpublished = AdviceLedger(0.0)
        """The ledger of a pool no advice reaches (never fed)."""

    @property
    def ASKS_ONLY_WHEN_FREED(self) -> bool:
        """Asked as the host's policy would be, so the twin makes a replay's calls."""
        return self.host is not None and self.host.policy.ASKS_ONLY_WHEN_FREED

    @property
    def ledger(self) -> AdviceLedger:
        host = self.host
        if host is None or host.dry_run or host.withheld:  # withheld: by the guard
            return self.unpublished
        return host.standing.ledger

    def resolve(self, view: PoolView, numbers: Sequence[int], now: float) -> Resolved:
        """Run one cycle; what it took into the ledger, if it reached the twin's sink."""
        twin, host = self.twin, self.host
        assert host is not None
        twin.view, twin.delivered = view, False
        before = self.ledger
        host.cycle(now)
        twin.view = EMPTY_VIEW
        if not twin.delivered or host.withheld or self.ledger is not before:
            return Resolved(Taken(), {})  # a switched ledger is filed anew next cycle
        return Resolved(host.standing.taken, host.decided.jobs)


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


def shadow_host(
    policy: Policy, twin: TwinPool, lifetime_s: float, clock: Any, source: PoolSource
) -> PolicyHost:
    """A host for re-simulating the pool up to a snapshot (its learning is thrown away), polling
    the twin through ``source``."""
    return PolicyHost(policy, source, [twin], DaemonMetrics(clock), lifetime_s)
