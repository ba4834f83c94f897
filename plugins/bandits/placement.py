"""The four placement bandits of paper 000 sec. 4 as policies, expressed as HTCondor advice.

When something a decision rests on changes (a machine freed, jobs arrived, the hour turned), the
bandit of state (hour, k) of every prior-hours class k with idle jobs draws its eq. 6 choice among
the actions available now (machines or clusters with a free machine, "run", "stay queued"). It
reaches the negotiator only as ``AdvisorRankByPriorHours[k]``: the greedy action's machines rank
highest, available actions the estimates prefer to queueing follow in estimate order (a burst
spills over as it would job by job; equal estimates rank alike, ties at random), as many as a
cycle can start jobs (``decision.ranks``); every other machine gets -1, which keeps class-k jobs
off it; "stay queued" is -1 everywhere. An exploring draw gives the top
rank to one free machine of the explored action, so one job explores, as in the paper, not the
whole class. The free machines of an action follow one named advice, its row: a new row re-ranks
them all at once, and the negotiator ranks a few groups, not every machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import compress
from operator import attrgetter
from typing import Any, ClassVar

from plugins.bandits.actions import ActionMap
from plugins.bandits.agent import BanditAgent, Positions
from plugins.bandits.decision import FEW_ACTIONS, QUEUE, Draw, draw, ranks
from plugins.bandits.explain import explain_bandit
from plugins.bandits.hindsight import FreeMachines
from plugins.bandits.jobs import JobMemory
from plugins.bandits.options import BANDIT_OPTIONS
from plugins.bandits.rewards import placement_reward, queue_reward
from plugins.bandits.rows import ActionRows
from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.clock import HOUR, crosses_reboot, hour_of_day, hour_of_week
from plugins.contract.events import (
    EVICTIONS,
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
    MachinePowerChanged,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.policy import MachineInfo, Policy, PolicyContext, PoolView

INF = float("inf")
MACHINE_NAME = attrgetter("name")


class PlacementBandit(Policy):
    """Shared machinery; subclasses say what an action is (``LEVEL``) and the clock (``WEEK``)."""

    LEVEL: ClassVar[str] = "cluster"
    WEEK: ClassVar[bool] = False
    VERSION = "1"
    OPTIONS = BANDIT_OPTIONS
    HANDLERS: ClassVar[dict[type, str]] = {
        AttemptEnded: "_attempt_ended",
        AttemptStarted: "_attempt_started",
        JobQueued: "_job_queued",
        JobRemoved: "_job_removed",
        OwnerSessionStarted: "_owner_arrived",
        MachinePowerChanged: "_power_changed",
    }
    """The events learned from, and the method each goes to."""
    WANTS = frozenset(HANDLERS)
    WANTS_POWER = frozenset({PowerState.OFF})
    ASKS_ONLY_WHEN_FREED = True

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        opts = self.options
        self.sigma: float = opts["sigma"]
        self.agent = BanditAgent(
            opts["history"],
            opts["epsilon"],
            opts["untried_zero"],
            opts["initial_epsilon"],
            opts["diverge"],
        )
        self.inventory = ActionMap(self.LEVEL)
        self.action_of = self.inventory.of
        self.actions = self.inventory.actions
        self.free = FreeMachines(self.inventory.place_of.__getitem__, 0)
        self.few = True
        self.jobs = JobMemory()
        self.rows = ActionRows(())
        self.hour: Callable[[float], int] = hour_of_week if self.WEEK else hour_of_day
        """The clock of the states (hour, k): a state is ``(self.hour(t), k)``."""
        self.slot = -1
        self.explore: dict[int, str] = {}
        """Per class k, the one free machine an exploring draw sent it to."""
        self.decisions = 0
        self._handlers: dict[type, Callable[[Any], None]] = {
            kind: getattr(self, method) for kind, method in self.HANDLERS.items()
        }
        self.machines_joined(list(context.machines.values()))

    def machines_joined(self, machines: Sequence[MachineInfo]) -> None:
        added = self.inventory.join(machines)
        if added is None:
            return
        self.agent.index_actions(self.actions)
        self.free.add_groups(len(added))
        self.rows.add_actions(added)
        self.few = len(self.actions) <= FEW_ACTIONS  # decided on Python lists (decision.py)

    # -- learning ----------------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        # one dict lookup per event: a year brings millions, most of them owner sessions
        handler = self._handlers.get(type(event))
        if handler is not None:  # kinds outside WANTS teach nothing
            handler(event)

    def _attempt_started(self, event: AttemptStarted) -> None:
        self.free.take(event.machine, event.time)
        state = (self.hour(event.time), self.jobs.prior_class(event.job_id))
        self.jobs.start(event.job_id, state, self.action_of[event.machine])

    def _job_queued(self, event: JobQueued) -> None:
        self.jobs.enqueue(event.job_id)

    def _job_removed(self, event: JobRemoved) -> None:
        for _, queued_in in self.jobs.finish(event.job_id):  # eq. 4: it could run nowhere
            self.agent.reward(queued_in, QUEUE, queue_reward(False))

    def _owner_arrived(self, event: OwnerSessionStarted) -> None:
        self.free.take(event.machine, event.time)

    def _power_changed(self, event: MachinePowerChanged) -> None:
        if event.state is PowerState.OFF:
            self.free.take(event.machine, event.time)

    def _attempt_ended(self, event: AttemptEnded) -> None:
        duration = event.time - event.started
        requeued = event.outcome in EVICTIONS
        placed = self.jobs.end(event.job_id, duration, requeued)
        if placed is not None:  # eq. 4, a job sent to a machine
            reward = placement_reward(
                event.outcome, self.inventory.energy[event.machine], self.sigma
            )
            self.agent.reward(placed[0], placed[1], reward)
        if requeued:
            return
        completed = event.outcome is AttemptOutcome.COMPLETED
        for t0, state in self.jobs.finish(event.job_id):
            # eq. 4, a job left in the queue: a job that never completes could run nowhere
            ran = completed and self.free.stayed_free(t0, t0 + duration)
            ran = ran and not crosses_reboot(t0, duration, self.context.reboot_hour)
            self.agent.reward(state, QUEUE, queue_reward(ran))

    # -- deciding ---------------------------------------------------------------------------
    def advise(self, view: PoolView, now: float) -> Advice:
        free = self.free
        # Decide again only when something a decision rests on changed: a machine became free,
        # jobs arrived or the hour (the state) turned; otherwise the last draw stands. A machine
        # re-advised only because its advice lapsed changes nothing (and must not add a draw,
        # or eq. 6 explores once per advice lifetime rather than per decision).
        freed = free.free_all(map(MACHINE_NAME, view.machines), now)
        slot = self.hour(now)
        fresh = freed or bool(view.new_jobs) or slot != self.slot
        self.slot = slot
        probes_moved = self._redraw(view.idle_jobs_by_prior_hours, now) if fresh else set()
        rows, changes = self.rows, self.rows.changes()
        probed, action_of = set(self.explore.values()), self.action_of
        # a machine already following its action's row needs no answer (it goes on following)
        readvise = {mv.name for mv in view.machines if mv.follows != action_of[mv.name]}
        readvise |= probes_moved
        if probed and changes:  # (no generator for the rounds without either: most of them)
            readvise.update(m for m in probed if action_of[m] in changes and m in free)
        advice, followed = Advice(), set()
        # sorted: the negotiator files machines in this order, and str hashes vary by process
        for name in sorted(readvise):
            if name in probed:
                advice.machines[name] = self._explored(name)
            else:
                advice.follows[name] = action_of[name]
                followed.add(action_of[name])
        rows.state(advice, changes, followed)
        advice.shared_until = rows.until(now)
        return advice

    def _redraw(self, idle: Sequence[int], now: float) -> set[str]:
        """A new draw for every class with idle jobs; its ranks go to the rows. Returns the
        free machines an exploring job left or now goes to (their advice changes)."""
        waiting = list(compress(range(len(idle)), idle))  # the classes with a count (few of 24)
        if not waiting:
            return set()
        draws: dict[int, Draw | None] = dict.fromkeys(waiting)
        deciding = [k for k in waiting if self._decides(k, now)]
        # a cycle starts at most the idle jobs of the classes that run, and one per explorer
        demand = 0
        if deciding:  # the available actions only when some class chooses among them
            positions = self.free.positions(self.options["prune_full"], self.few)
            for k in deciding:
                new = draws[k] = self._draw(k, now, positions)
                demand += (idle[k] if new.runs else 0) + (new.probe is not None)
        moved: set[str] = set()
        for k, drawn in draws.items():
            self.rows.set_column(k, ranks(drawn, self.actions, demand) if drawn else {})
            old = self.explore.pop(k, None)
            probe = drawn.probe if drawn else None
            if probe is not None:
                self.explore[k] = probe
            for machine in (old, probe):  # an explorer left or goes to it (None: no machine)
                if machine in self.free.since:
                    moved.add(machine)
        return moved

    def _explored(self, machine: str) -> MachineAdvice:
        """The machine's action row, with the top rank for classes exploring on this machine."""
        probes = (k for k, m in self.explore.items() if m == machine)
        return self.rows.explored(self.action_of[machine], probes)

    def _decides(self, k: int, now: float) -> bool:
        """Whether class k draws: not when there is nothing to choose (no free machine, or the
        local-knowledge rule: the job just waits, no decision, no reward)."""
        return bool(self.free.since) and not (
            self.options["reboot_rule"] and crosses_reboot(now, k * HOUR, self.context.reboot_hour)
        )

    def _draw(self, k: int, now: float, positions: Positions) -> Draw:
        """Class k's eq. 6 draw."""
        state = (self.hour(now), k)
        drawn = draw(self.agent, self.free, self.actions, state, positions, self.context.rng)
        self.decisions += 1
        if not drawn.runs:
            self.jobs.queue_decision(k, now, state)
        return drawn

    def explain(self, machine: str) -> dict[str, Any]:
        return explain_bandit(self, machine)

    # -- state -------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent.state_dict(),
            "jobs": self.jobs.state_dict(),
            "free": self.free.state_dict(self.jobs.oldest_pending(default=INF)),
            "columns": self.rows.columns,
            "explore": {str(k): m for k, m in self.explore.items()},
            "slot": self.slot,
            "hour_end": self.rows.hour_end,
            "announced": sorted(self.rows.announced),
            "decisions": self.decisions,
            "rng": self.context.rng.bit_generator.state,
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.agent.load_state(state["agent"])
        self.jobs.load_state(state["jobs"])
        self.free.load_state(state["free"])
        self.decisions = int(state["decisions"])
        self.slot = int(state["slot"])
        self.explore = {int(k): m for k, m in state["explore"].items()}
        self.rows.rebuild(
            state["columns"], float(state.get("hour_end", 0.0)), state.get("announced", ())
        )
        self.context.rng.bit_generator.state = state["rng"]


class ComputerBandit(PlacementBandit):
    """Sec. 4.1: an action per machine, or stay queued; state (hour of day, prior hours)."""

    NAME = "bandit-computer"
    LEVEL = "computer"


class ClusterBandit(PlacementBandit):
    """Sec. 4.2: an action per cluster (a random free machine inside it), or stay queued."""

    NAME = "bandit-cluster"
    LEVEL = "cluster"


class ClusterWeekBandit(PlacementBandit):
    """Sec. 4.2: the cluster bandit with the hour of the week as its clock (168 x 24 states)."""

    NAME = "bandit-cluster-week"
    LEVEL = "cluster"
    WEEK = True


class SystemBandit(PlacementBandit):
    """Sec. 4.3: run (on a random free machine) or stay queued; state (hour of day, prior hours)."""

    NAME = "bandit-system"
    LEVEL = "system"
