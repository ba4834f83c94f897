"""``frugal``: rank free machines by the energy a job is expected to cost there; hold only the
jobs that advice can keep waiting at no cost (and, when asked, almost sure never-finishers).

Why a rank: a ranked job still starts on the first cycle any machine is free, so ranking cannot
make users wait; the papers' holds (a bandit's "stay queued", Algorithm 1's wait for a long
enough idle time) cost overhead on pools they were not tuned on (docs/robust-policies.md).

- Rank (per prior-hours class k, for machines of cluster c drawing W watts): the expected energy
  of a placement, W (1 + P/2) + P W_mean, where P is the chance an owner of c arrives within the
  runtime a class-k job needs (arrivals.py). An evicted job wasted half its runtime on average
  and runs again elsewhere. It departs from eq. 4 of paper 000, which learns the same trade-off
  per cluster from rewards, by modelling it: nothing is learned by keeping jobs queued.
- Hold class k (rank -1 everywhere) when the next reboot comes before k hours (paper 000 sec.
  4.4.3): the reboot would surely kill it, so waiting costs nothing; and, if asked
  (``hold_never_finishers``), when class k's jobs surely never finish (fates.py).
- Keep class k off room c (rank -1 there) while waiting for a safer hour or room is expected to
  finish its jobs sooner than starting in c now (payback.py, frugal 2; the later start expected
  in the safest room, frugal 3, or on as many of the safest machines' cores as wait, frugal 11,
  a k-core job as k, frugal 12, waiting.py): it costs nothing in expectation, saves a cut run.
- Keep class k off room c while a start there now completes with a chance below
  ``futile_below`` (futile.py, frugal 5): the reboot rule extended to owners. Since frugal 10 no
  hold keeps a class off the rooms where a start now is its likeliest of the day.
- Keep a suspected never-finisher (suspects.py: an attempt longer than any completed job needed,
  no job of its batch completed) off every machine for ``keep_off_hours`` after each eviction
  (frugal 4), at its first only until ``trusted_batches`` batches completed a job (frugal 9). The
  papers hold such jobs by class (paper 000 sec. 4), from fates a neglected batch gives late.
- Rank the class of jobs that ran 23 hours, longer than any completed job needed, by the energy
  an attempt burns before an owner or the reboot stops it, and never hold it (cut_short.py,
  ``cut_short``; frugal 6): the keep-off ends before the day's bound, so this start is advised.
- Rank the other jobs of such a job's batch in that class too, and keep them off after each
  eviction, until a job of the batch completes (batch_class.py, ``cut_short_batches``; frugal 7).
- Rank a new job in the class of the hours nearly all its user's recent jobs needed, lowered to a
  class most machines rank while it waits (user_runtimes.py, ``user_quantile``; frugal 8).
- Hold a new job until the reboot has passed where all but ``user_quantile`` of its user's
  runtimes (else the pool's) are longer than the time left (reboot_wait.py, ``reboot_wait``;
  frugal 13): the reboot rule for a job that has no class yet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from plugins.contract.advice import PRIOR_HOURS_CLASSES, Advice, JobAdvice, MachineAdvice
from plugins.contract.clock import HOUR, next_reboot
from plugins.contract.events import (
    EVICTIONS,
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
    OwnerSessionEnded,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineInfo, Option, Policy, PolicyContext, PoolView
from plugins.frugal.arrivals import OwnerArrivals
from plugins.frugal.batch_class import CutShortBatches
from plugins.frugal.cut_short import (
    ATTEMPT_GRID_H,
    CUT_SHORT_FROM,
    attempt_hours,
    first_cut_short_class,
)
from plugins.frugal.fates import JobFates
from plugins.frugal.holds import held_classes, room_holds
from plugins.frugal.options import FRUGAL_OPTIONS
from plugins.frugal.reboot_wait import reboot_wait
from plugins.frugal.suspects import NeverFinisherSuspects
from plugins.frugal.user_runtimes import UserRuntimes, open_shares
from plugins.frugal.waiting import WaitingJobs

HELD = -1.0
SCALE = 1e4
"""Ranks are SCALE / expected watts: positive (a negative rank keeps jobs off)."""
JOB_EVENTS = (AttemptStarted, AttemptEnded, JobQueued, JobRemoved)


class FrugalPolicy(Policy):
    """Energy-ranked placement that holds only at no cost to users (docs/robust-policies.md)."""

    NAME = "frugal"
    VERSION = "13"
    OPTIONS: ClassVar[Mapping[str, Option]] = FRUGAL_OPTIONS
    WANTS = frozenset({*JOB_EVENTS, OwnerSessionStarted, OwnerSessionEnded})
    WANTS_POWER = frozenset()
    ASKS_ONLY_WHEN_FREED = True

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        self.arrivals = OwnerArrivals()
        self.fates = JobFates()
        self.suspects = NeverFinisherSuspects(self.options["trusted_batches"])
        self.batches = CutShortBatches(self.options["cut_short_batches"] == "on")
        self.users = UserRuntimes()
        self.waiting = WaitingJobs()
        self.job_advice: dict[str, JobAdvice] = {}
        """Per-job advice decided since the last advice (it is sent once)."""
        self.cluster_of: dict[str, str] = {}
        """Every machine counted in ``arrivals``."""
        self.group_of: dict[str, str] = {}
        """Each machine's named advice: its cluster and its active draw."""
        self.groups: dict[str, tuple[int, float]] = {}
        """Per name, its cluster's index in ``arrivals`` and its watts."""
        self.rows: dict[str, tuple[float, ...]] = {}
        self.hour = -1
        self.open_share = np.zeros(PRIOR_HOURS_CLASSES)
        """Per class, the share of the machines that rank it now (a new job's class is one
        most machines rank: a user's runtimes guide where it starts, not whether)."""
        self.machines_joined(list(context.machines.values()))

    def machines_joined(self, machines: Sequence[MachineInfo]) -> None:
        unseen = [m for m in machines if m.name not in self.cluster_of]  # (a restart knows some)
        self.arrivals.join([m.cluster for m in unseen])
        self.cluster_of.update((m.name, m.cluster) for m in unseen)
        new = [m for m in machines if m.name not in self.group_of]
        self.arrivals.count_slots([m.cluster for m in new], [m.jobs_at_once for m in new])
        for m in new:
            name = f"{m.cluster}@{m.active_watts:g}W"
            self.group_of[m.name] = name
            self.groups[name] = (self.arrivals.cluster_index[m.cluster], m.active_watts)
        if new:
            self.hour = -1  # new names need rows

    def observe(self, event: Event) -> None:
        if isinstance(event, OwnerSessionStarted):
            cluster = self.cluster_of.get(event.machine)
            if cluster is not None:
                self.arrivals.login(cluster, event.time)
        elif isinstance(event, OwnerSessionEnded):
            cluster = self.cluster_of.get(event.machine)
            if cluster is not None:
                self.arrivals.logout(cluster, event.time)
        elif isinstance(event, AttemptEnded):
            if event.outcome is AttemptOutcome.COMPLETED:
                self.fates.completed(event.job_id, event.time - event.started)
                self.suspects.completed(event.job_id, event.time - event.started, event.time)
                self.users.completed(event.job_id, event.time - event.started)
                for job in self.batches.cleared(event.job_id):
                    self.job_advice[job] = JobAdvice(needs_hours=0)
            elif event.outcome in EVICTIONS:
                self.fates.evicted(event.job_id, event.time - event.started)
                self._advise_evicted(event.job_id, event.time)
            elif event.outcome is AttemptOutcome.REMOVED:
                self._removed(event.job_id)
        elif isinstance(event, JobRemoved):
            self._removed(event.job_id)
        elif isinstance(event, AttemptStarted):
            self.users.started(event.job_id)
        elif isinstance(event, JobQueued):
            self._advise_queued(event)
        self.waiting.observe(event, self.fates.longest)

    def _removed(self, job: str) -> None:
        self.fates.removed(job)
        self.batches.left(job)
        self.users.left(job)

    def _advise_queued(self, event: JobQueued) -> None:
        """Rank a job of a cut-short batch with it, and a new job by its user's runtimes; hold a
        new job the reboot would surely kill until it has passed."""
        job = event.job_id
        if self._unraised_in_cut_short_batch(job):
            self.batches.raise_class(job)  # (an eviction's advice, if any, says more)
            self.job_advice.setdefault(job, JobAdvice(needs_hours=CUT_SHORT_FROM))
            return
        if event.prior_attempts:
            return
        until = None
        quantile = self.options["user_quantile"]
        if self.options["reboot_wait"] == "on":
            runtimes = self.users.runtimes.get(event.user, ())
            pool = self.fates.runtimes
            until = reboot_wait(event.time, self.context.reboot_hour, runtimes, pool, quantile)
        hours = 0
        if quantile > 0:
            needs = self.users.surely_needs_hours(event.user, quantile)
            if needs > 0:  # (the first cut-short class is looked up only for a job classed)
                needs = min(needs, self._first_cut_short() - 1)
            hours = self.users.queued(job, event.user, needs, self.open_share, until)
        if hours > 0 or until is not None:
            self.job_advice.setdefault(job, JobAdvice(hold_until=until, needs_hours=hours or None))

    def _advise_evicted(self, job: str, now: float) -> None:
        """Keep a suspect off every machine for a while, and rank a job of a cut-short batch in
        the cut-short class."""
        longest = self.fates.longest[job]
        suspected = self.suspects.suspected(job, longest)
        if suspected and self.batches.enabled and longest >= self._first_cut_short() * HOUR:
            self.batches.mark(job, now)
        needs = None
        if self.batches.includes(job, self.suspects.batches_done):
            self.batches.raise_class(job)
            needs = CUT_SHORT_FROM
        hours = self.options["keep_off_hours"]
        kept_off = suspected and self.suspects.keeps_off(job)
        until = now + hours * HOUR if hours > 0 and (kept_off or needs is not None) else None
        if until is not None or needs is not None:
            self.job_advice[job] = JobAdvice(hold_until=until, needs_hours=needs)

    def _unraised_in_cut_short_batch(self, job: str) -> bool:
        """A queued job to rank with its batch (one requeued was, at its eviction)."""
        in_batch = self.batches.includes(job, self.suspects.batches_done)
        return in_batch and not self.batches.is_raised(job)

    def _first_cut_short(self) -> int:
        """The first class ranked where an attempt is stopped soonest (PRIOR_HOURS_CLASSES: none,
        as with ``cut_short`` off)."""
        if self.options["cut_short"] == "off":
            return PRIOR_HOURS_CLASSES
        return first_cut_short_class(self.suspects.first_suspect_class())

    def advise(self, view: PoolView, now: float) -> Advice:
        hour = int(now // HOUR)
        stated: set[str] = set()
        if hour != self.hour:  # the rows change with the hour (rates, the reboot) and learning
            self.hour = hour
            new_rows = self._rows(now, self.waiting.by_class(now, self.arrivals.most_at_once))
            stated = {n for n, r in new_rows.items() if self.rows.get(n) != r}
            self.rows = new_rows
            self.open_share = open_shares([self.rows[n] for n in self.group_of.values()])
            for job, hours in self.users.reclassed(self.open_share).items():
                until = self.users.hold_of(job, now)  # (frugal 13's hold is kept)
                self.job_advice.setdefault(job, JobAdvice(hold_until=until, needs_hours=hours))
        advice = Advice(shared_until=(hour + 2) * HOUR)  # renewed each hour, lapses an hour later
        for mv in view.machines:
            name = self.group_of.get(mv.name)
            if name is not None and mv.follows != name:
                advice.follows[mv.name] = name
        stated.update(advice.follows.values())  # a name is stated in full as machines follow it
        for name in sorted(stated):
            row = self.rows[name]
            advice.shared[name] = MachineAdvice(rank=row[0], rank_by_prior_hours=row)
        advice.jobs, self.job_advice = self.job_advice, {}
        return advice

    def _rows(self, now: float, waiting: np.ndarray) -> dict[str, tuple[float, ...]]:
        needed = self.fates.runtime_needed_h()
        chance = self.arrivals.eviction_chance(now, needed)
        to_reboot_h = (next_reboot(now, self.context.reboot_hour) - now) / HOUR
        held = held_classes(self.fates, to_reboot_h, self.options)
        watts = np.array([w for _, w in self.groups.values()]) if self.groups else np.zeros(0)
        mean_watts = float(watts.mean()) if len(watts) else 0.0
        off = room_holds(self.arrivals, self.fates, now, to_reboot_h, self.options, waiting)
        first = self._first_cut_short()  # (none: PRIOR_HOURS_CLASSES) and an attempt's hours:
        hours = attempt_hours(self.arrivals.eviction_chance(now, ATTEMPT_GRID_H), to_reboot_h)
        rows = {}
        for name, (c, w) in self.groups.items():
            p = chance[c]
            rank = np.round(SCALE / (w * (1 + p / 2) + p * mean_watts), 3)
            rank[held | off[c]] = HELD
            rank[first:] = round(SCALE / (w * max(hours[c], 0.01)), 3)  # 0 h: stopped at once
            rows[name] = tuple(float(x) for x in rank)
        return rows

    def explain(self, machine: str) -> dict[str, Any]:
        name = self.group_of.get(machine)
        if name is None:
            return {}
        return {
            "frugal": {
                "group": name,
                "ranks by prior hours": list(self.rows.get(name, ()))
                or "not computed since the start (the published ranks are the last cycle's)",
                "runtime needed (h)": [round(x, 2) for x in self.fates.runtime_needed_h()],
                "never-finisher share, 95% lower bound": [
                    round(x, 3) for x in self.fates.never_finisher_bound()
                ],
            }
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "arrivals": self.arrivals.state_dict(),
            "fates": self.fates.state_dict(),
            "suspects": self.suspects.state_dict(),
            "batches": self.batches.state_dict(),
            "users": self.users.state_dict(),
            "waiting": self.waiting.state_dict(),
            "clusters": dict(self.cluster_of),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.arrivals.load_state(state["arrivals"])
        self.fates.load_state(state["fates"])
        if "suspects" in state:  # (a frugal 3 snapshot has none: learned anew)
            self.suspects.load_state(state["suspects"])
        if "batches" in state:  # (nor a frugal 6 one any marked batch)
            self.batches.load_state(state["batches"])
        if "users" in state:  # (nor a frugal 7 one any user's runtimes)
            self.users.load_state(state["users"])
        self.waiting.load_state(state.get("waiting", {}))  # (nor a frugal 10 one any waits)
        self.cluster_of = dict(state["clusters"])
        self.group_of, self.groups = {}, {}
        self.machines_joined(list(self.context.machines.values()))
        self.hour = -1
