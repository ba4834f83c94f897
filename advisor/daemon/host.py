"""The policy host: pool events in, advice out, the same policy objects the simulator drives.

Each cycle polls the pool source, tells the policy about machines it has not seen, feeds the new
events the policy wants to ``observe``, asks ``advise`` about the candidate machines and hands
every machine's standing advice, stamped with its expiry, to the sinks. Advice is renewed only
from a view the pool confirmed within ``stale_after_s``: past that the host publishes nothing,
so the last advice lapses at its ``AdvisorExpires`` and the pool runs as without the advisor.
Time always arrives as ``now`` from the caller (the wall clock live, the engine in the twin), so
the same code runs in both. A lock keeps scheduler threads from interleaving; ``retrain`` runs
outside it, as the policy protocol asks.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Mapping, Sequence
from typing import Any

from advisor.condor.rank_places import in_places
from advisor.daemon.control_group import ControlGroup
from advisor.daemon.described_otherwise import described_otherwise
from advisor.daemon.logs import iso
from advisor.daemon.metrics import DaemonMetrics
from advisor.daemon.policy_answer import answer, failed_to_learn
from advisor.daemon.pool_health import PoolHealth
from advisor.daemon.recurring import Recurring
from advisor.daemon.standing import StandingAdvice
from advisor.daemon.unanswered_wakes import UnansweredWakes
from advisor.daemon.unpublished import Unpublished
from advisor.daemon.woken import WokenMachines
from advisor.ports import AdviceSink, PoolSource, SinkRefused
from plugins.contract.advice import Advice
from plugins.contract.control import of_control_job
from plugins.contract.events import AttemptEnded, Event, JobQueued, JobRemoved, MachinePowerChanged
from plugins.contract.policy import MachineInfo, Policy, PoolView

log = logging.getLogger("htcondor_advisor.host")
EMPTY_VIEW = PoolView(machines=(), idle_jobs_by_prior_hours=())
RECENT_PER_MACHINE = 10
JOB_EVENTS = (JobQueued, JobRemoved, AttemptEnded)


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
        stale_after_s: float = float("inf"),
    ) -> None:
        self.policy = policy
        self.source = source
        self.sinks = list(sinks)
        self.metrics = metrics
        self.standing = StandingAdvice(lifetime_s)
        self.dry_run = dry_run
        self.stale_after_s = stale_after_s
        """Advice is renewed only from a view the pool confirmed this recently."""
        self.confirmed_at: float | None = None
        """When the pool last answered in full (collector and every schedd)."""
        self.lock = threading.RLock()
        self.view = EMPTY_VIEW
        self.machines: dict[str, MachineInfo] = {}
        self.recent: defaultdict[str, deque[Event]] = defaultdict(
            lambda: deque(maxlen=RECENT_PER_MACHINE)
        )
        self.described: set[str] = set()
        """Machines said to be described otherwise than learned (``join``)."""
        self.woken = WokenMachines()
        self.wakes = UnansweredWakes(metrics)
        self.events_seen = 0
        self.cycles = 0
        self.decided = Advice()
        """The policy's last advice as it gave it (before the expiry stamp)."""
        self.unknown_machine_events = 0
        """Events naming a machine the pool never showed (not fed: no policy can place there)."""
        self.unpublished = Unpublished(metrics)
        self.recurring = Recurring(log)
        """An outage or a refusal is said when it begins, changes or an hour on, and ends."""
        self.health = PoolHealth(metrics, self.recurring)
        self.failing: str | None = None  # what the policy raised in its last advise, if it did
        self.control: ControlGroup | None = None  # its accounting and guard (percent > 0)

    @property
    def withheld(self) -> bool:
        """Whether the control group's guard publishes neutral advice now."""
        return self.control is not None and self.control.withheld

    @property
    def lifetime_s(self) -> float:
        """How long published advice stands unless renewed (``publish.advice_lifetime``)."""
        return self.standing.ledger.lifetime_s

    @lifetime_s.setter
    def lifetime_s(self, seconds: float) -> None:
        self.standing.ledger.lifetime_s = seconds

    # -- the cycle ---------------------------------------------------------------------------
    def observe(self, now: float) -> bool:
        """Poll the pool and feed the policy; False when the pool did not answer."""
        with self.lock:
            obs = self.source.poll(now)
            self.join(obs.machines)
            self._feed(obs.events)  # what did answer is real, even when a schedd did not
            if not self.health.polled(obs, now):
                return False
            self.view = obs.view
            self.confirmed_at = now
            self.metrics.last_observation = now
            return True

    def join(self, machines: Mapping[str, MachineInfo]) -> None:
        """Add machines not seen before to the inventory the policy reads, and tell it."""
        changed = described_otherwise(self.machines, machines, self.described)
        if changed is not None:
            log.warning(changed)
        new = [info for name, info in machines.items() if name not in self.machines]
        if new:
            self.machines.update((info.name, info) for info in new)
            for info in new:
                self.standing.number(info.name)
            self.policy.machines_joined(new)
            if self.control is not None:
                self.control.split.join(machines)
            log.info("%d machine(s) joined, %d known", len(new), len(self.machines))

    def stale(self, now: float) -> bool:
        """Whether the last confirmed view is too old to advise on."""
        return self.confirmed_at is None or now - self.confirmed_at > self.stale_after_s

    def _feed(self, events: Sequence[Event]) -> None:
        wanted = self.policy.WANTS
        observe = self.policy.observe
        recent = self.recent
        known = self.machines
        kinds: Counter[str] = Counter()
        learned: Counter[str] = Counter()
        hidden = self.control.book.percent if self.control is not None else 0  # control jobs
        for event in events:
            kind = type(event)
            machine = getattr(event, "machine", None)
            if machine is not None and machine not in known:
                self.unknown_machine_events += 1
                log.debug("ignored %s on %s: the collector never showed it", kind.__name__, machine)
                if kind is AttemptEnded and self.control is not None:  # a job that flocked: it
                    self.control.book.observe(event)  # ended, drawing nothing from this pool
                continue
            kinds[kind.__name__] += 1
            if kind in wanted and not (hidden and of_control_job(event, hidden)):
                try:
                    observe(event)
                    learned[kind.__name__] += 1
                except Exception as exc:  # a bug in the policy: that event skipped, said
                    failed_to_learn(self.policy, event, exc, self.recurring)
            if machine is not None:
                recent[machine].append(event)
            if kind is MachinePowerChanged:
                self.woken.observe(event)  # type: ignore[arg-type]
            if kind is AttemptEnded:
                self.metrics.rewards.labels(event.outcome.value).inc()  # type: ignore[union-attr]
            if self.control is not None and kind in JOB_EVENTS:
                self.control.book.observe(event)
        for name, count in kinds.items():
            self.metrics.events.labels(name).inc(count)
        for name, count in learned.items():  # once per kind, not per event (the twin's millions)
            self.metrics.learned.labels(name).inc(count)
        self.events_seen += len(events)

    def publish(self, now: float) -> Advice:
        """Advise on the last confirmed view and publish every machine's standing advice
        (unless dry-run); nothing at all once that view is older than ``stale_after_s``."""
        with self.lock:
            stale = self.stale(now)
            self.metrics.advice_stale.set(1 if stale else 0)
            if stale:
                since = "start" if self.confirmed_at is None else iso(self.confirmed_at)
                text = f"no confirmed view of the pool since {since}: advice not renewed, it lapses"
                self.recurring.say("stale", text, now)
                return Advice()
            self.recurring.ended("stale", f"advice renewed again at {iso(now)}")
            view = self.standing.ask(self.wakes.screen(self.view, now))
            split = self.control.split if self.control is not None else None
            asked = split.ask(view) if split else view
            decided, self.failing = answer(self.policy, asked, now, self.machines, self.recurring)
            if decided is None:  # a bug in the policy: the advice lapses, as in an outage
                return Advice()
            self.decided = decided
            told = split.tell(self.decided, view) if split else self.decided
            machines = self.woken.kept_up(self.standing.update(view, told, now), now)
            advice = Advice(in_places(machines), self.decided.jobs)  # the order HTCondor keeps
            if self.control is not None:
                advice = self.control.screened(advice, now)
            self.cycles += 1
            self.metrics.decisions.inc(len(advice.machines))
            self.unpublished.count(self.decided, self.sinks, self.policy.label)
            if self.dry_run:
                counts = len(advice.machines), len(advice.jobs)
                log.info(
                    "dry run at %s: %d machine, %d job advice not published", iso(now), *counts
                )
                return advice
            if any(getattr(sink, "reaches_sleeping", False) for sink in self.sinks):
                self.wakes.published(advice.machines, view, now)
            for sink in self.sinks:
                try:
                    sink.publish(advice, now)
                    self.recurring.ended(sink.name, f"publishing to {sink.name} works again")
                except SinkRefused as refused:  # the administrator's to fix: said, not traced
                    self.metrics.publish_failures.labels(sink.name).inc()
                    text = f"publishing to {sink.name} failed: {refused}"
                    self.recurring.say(sink.name, text, now, logging.ERROR)
                except Exception:
                    self.metrics.publish_failures.labels(sink.name).inc()
                    log.exception("publishing to %s failed", sink.name)
            return advice

    def cycle(self, now: float) -> Advice:
        with self.metrics.cycle_seconds.time():
            self.observe(now)
            return self.publish(now)

    def retrain(self, now: float) -> None:
        log.info("retraining %s on what was observed before %s", self.policy.label, iso(now))
        began = time.monotonic()
        said = self.policy.retrain(now)
        self.metrics.last_retrain = now
        took, label = time.monotonic() - began, self.policy.label
        log.info("retrained %s in %.1f s%s", label, took, f": {said}" if said else "")

    # -- state -------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Everything to resume from: the machines known, policy state, source cursor, recent
        events per machine."""
        with self.lock:
            return {
                "machines": [dataclasses.asdict(info) for info in self.machines.values()],
                "policy": {
                    "name": self.policy.NAME,
                    "label": self.policy.label,
                    "state": self.policy.state_dict(),
                },
                "cursor": self.source.cursor(),
                "recent": {m: [event_record(e) for e in ring] for m, ring in self.recent.items()},
                "counters": {"events": self.events_seen, "cycles": self.cycles},
                "woken": self.woken.state_dict(),
                "wakes": self.wakes.state_dict(),
                **({"control": self.control.state_dict()} if self.control is not None else {}),
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
            machines = [MachineInfo(**info) for info in state.get("machines", [])]
            self.join({info.name: info for info in machines})  # what the state names
            self.policy.load_state(saved["state"])
            self.source.restore(state["cursor"])
            if self.control is not None and "control" in state:
                self.control.load_state(state["control"])
            self.woken.load_state(state.get("woken", {}))  # (absent before it was kept)
            self.wakes.load_state(state.get("wakes", {}))
            self.events_seen = int(state["counters"]["events"])
            self.cycles = int(state["counters"]["cycles"])

    def swap_policy(self, policy: Policy) -> None:
        """Use ``policy`` from now on, carrying the learned state over when it is the same kind."""
        with self.lock:
            policy.machines_joined(list(self.machines.values()))
            if policy.NAME == self.policy.NAME:
                policy.load_state(self.policy.state_dict())
            else:
                log.warning(
                    "policy changed %s -> %s: learning starts over", self.policy.label, policy.label
                )
                # another policy names its own way
                self.standing = StandingAdvice(self.lifetime_s, self.machines)
            self.policy = policy
