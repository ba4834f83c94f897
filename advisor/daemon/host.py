"""The policy host: pool events in, advice out, the same policy objects the simulator drives.

Each cycle polls the pool source, feeds the new events the policy wants to ``observe``, asks
``advise`` about the candidate machines, stamps each piece of advice with its expiry and hands it
to the sinks. Time always arrives as ``now`` from the caller (the wall clock live, the engine in
the twin), so the same code runs in both. A lock keeps scheduler threads from interleaving;
``retrain`` runs outside it, as the policy protocol asks.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import Counter, deque
from collections.abc import Mapping, Sequence
from typing import Any

from advisor.daemon.followers import Followers
from advisor.daemon.metrics import DaemonMetrics
from advisor.ports import AdviceSink, PoolSource
from plugins.advice import NEUTRAL_MACHINE_ADVICE, Advice
from plugins.events import AttemptEnded, Event
from plugins.policy import MachineInfo, Policy, PoolView

log = logging.getLogger("htcondor_advisor.host")
EMPTY_VIEW = PoolView(machines=(), idle_jobs_by_prior_hours=())
RECENT_PER_MACHINE = 10


def stamp(advice: Advice, now: float, lifetime_s: float) -> Advice:
    """Give every non-neutral machine advice an expiry (the policy's own, else now + lifetime)."""
    machines = {
        name: adv
        if adv.expires is not None or adv == NEUTRAL_MACHINE_ADVICE
        else dataclasses.replace(adv, expires=now + lifetime_s)
        for name, adv in advice.machines.items()
    }
    return Advice(machines=machines, jobs=advice.jobs)


def event_record(event: Event) -> dict[str, Any]:
    """An event as JSON-compatible data (kind plus its fields)."""
    fields = type(event).__slots__
    return {"kind": type(event).__name__, **{f: getattr(event, f) for f in fields}}


class PolicyHost:
    def __init__(
        self,
        policy: Policy,
        source: PoolSource,
        sinks: Sequence[AdviceSink],
        metrics: DaemonMetrics,
        lifetime_s: float,
        dry_run: bool = False,
    ) -> None:
        self.policy = policy
        self.source = source
        self.sinks = list(sinks)
        self.metrics = metrics
        self.lifetime_s = lifetime_s
        self.dry_run = dry_run
        self.lock = threading.RLock()
        self.view = EMPTY_VIEW
        self.machines: dict[str, MachineInfo] = {}
        self.recent: dict[str, deque[Event]] = {}
        self.events_seen = 0
        self.cycles = 0
        self.healthy = True
        """Whether the last poll of the pool answered."""
        self.decided = Advice()
        """The policy's last advice as it gave it (before the expiry stamp)."""
        self.followers = Followers()

    # -- the cycle ---------------------------------------------------------------------------
    def observe(self, now: float) -> bool:
        """Poll the pool and feed the policy; False when the pool did not answer."""
        with self.lock:
            obs = self.source.poll(now)
            self.healthy = obs.healthy
            self.metrics.pool_healthy.set(1 if obs.healthy else 0)
            if not obs.healthy:
                log.warning("pool did not answer at %.0f; advice will lapse if this persists", now)
                return False
            self._feed(obs.events)
            self.view = obs.view
            self.machines.update(obs.machines)
            self.metrics.last_observation = now
            return True

    def _feed(self, events: Sequence[Event]) -> None:
        wanted = self.policy.WANTS
        observe = self.policy.observe
        recent = self.recent
        kinds: Counter[str] = Counter()
        for event in events:
            kind = type(event)
            kinds[kind.__name__] += 1
            if kind in wanted:
                observe(event)
            machine = getattr(event, "machine", None)
            if machine is not None:
                ring = recent.get(machine)
                if ring is None:
                    ring = recent[machine] = deque(maxlen=RECENT_PER_MACHINE)
                ring.append(event)
            if kind is AttemptEnded:
                self.metrics.rewards.labels(event.outcome.value).inc()  # type: ignore[union-attr]
        for name, count in kinds.items():
            self.metrics.events.labels(name).inc(count)
        self.events_seen += len(events)

    def publish(self, now: float) -> Advice:
        """Advise on the last observed view, stamp expiries, publish (unless dry-run)."""
        with self.lock:
            self.decided = self.policy.advise(self.view, now)
            machines = self.followers.resolve(self.decided)
            advice = stamp(Advice(machines, self.decided.jobs), now, self.lifetime_s)
            self.cycles += 1
            self.metrics.decisions.inc(len(advice.machines))
            if self.dry_run:
                log.info(
                    "dry run at %.0f: %d machine and %d job advice not published",
                    now,
                    len(advice.machines),
                    len(advice.jobs),
                )
                return advice
            for sink in self.sinks:
                try:
                    sink.publish(advice, now)
                except Exception:
                    self.metrics.publish_failures.labels(sink.name).inc()
                    log.exception("publishing to %s failed", sink.name)
            return advice

    def cycle(self, now: float) -> Advice:
        with self.metrics.cycle_seconds.time():
            self.observe(now)
            return self.publish(now)

    def retrain(self, now: float) -> None:
        log.info("retraining %s on what was observed before %.0f", self.policy.label, now)
        self.policy.retrain(now)
        self.metrics.last_retrain = now

    # -- state -------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Everything to resume from: policy state, source cursor, recent events per machine."""
        with self.lock:
            return {
                "policy": {
                    "name": self.policy.NAME,
                    "label": self.policy.label,
                    "state": self.policy.state_dict(),
                },
                "cursor": self.source.cursor(),
                "recent": {m: [event_record(e) for e in ring] for m, ring in self.recent.items()},
                "counters": {"events": self.events_seen, "cycles": self.cycles},
            }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Load a snapshot made by ``snapshot`` (the policy must be the same kind)."""
        saved = state["policy"]
        if saved["name"] != self.policy.NAME:
            raise ValueError(
                f"snapshot is of policy {saved['name']!r}, configured is {self.policy.NAME!r}; "
                "use another state directory or configure the same policy"
            )
        with self.lock:
            self.policy.load_state(saved["state"])
            self.source.restore(state["cursor"])
            self.events_seen = int(state["counters"]["events"])
            self.cycles = int(state["counters"]["cycles"])

    def swap_policy(self, policy: Policy) -> None:
        """Use ``policy`` from now on, carrying the learned state over when it is the same kind."""
        with self.lock:
            if policy.NAME == self.policy.NAME:
                policy.load_state(self.policy.state_dict())
            else:
                log.warning(
                    "policy changed %s -> %s: learning starts over", self.policy.label, policy.label
                )
                self.followers = Followers()  # another policy names its advice its own way
            self.policy = policy
