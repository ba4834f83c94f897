"""Opt-in schedd sink (``pool.edit_jobs``): per-job advice as the ``JobPrio`` of idle jobs or, for a
job the advice keeps off every machine, its ``AdvisorHoldUntil`` (``ADVISOR_JOB_HELD`` in
deploy/common/40), for a job the advice classes by what its batch showed, its ``AdvisorNeedsHours``
(``ADVISOR_CLASS``; a hold or a class says nothing of the job's priority, so its ``JobPrio`` is left
alone), and each idle job's prior-hours class as ``AdvisorPriorHours``.

The negotiator offers a submitter's idle jobs in ``JobPrio`` order (higher first), so a policy that
orders the queue (``fifo``, ``edf``, ``utility-sarsa``: ``JobAdvice.prio``) acts on a live pool only
through this edit. Each cycle it edits only ``JobPrio``, only of idle jobs, only of the ``owners``
the site named (all owners when none), and only where the advised value changed since it was last
sent, at most ``max_edits`` jobs: the schedd writes every edit to its job queue log. The advisor's
identity must be allowed to edit other users' jobs (a queue super user, ``deploy/access-point``). An
edit the schedd refuses raises ``SinkRefused``, which the daemon counts and logs as one line naming
the fix (again when it changes, or after an hour); jobs not edited are sent again the next cycle. A
schedd that does not answer (hung, restarting) is tried again with backoff (``retry.py``: one
warning line a try), the edits for it kept until it does. A job advised is edited on its own schedd
(``cluster.proc@schedd``, plugins/contract/job_ids.py); one without a schedd in its id, on each
schedd where it is idle.

``AdvisorPriorHours`` is the pool's fact, not a policy's: the job's longest earlier attempt in whole
hours, which the daemon knows from the epoch history while the job ad keeps only the last attempt
(``LastRemoteWallClockTime``). It is set only where the two classes differ, within the same edit
budget, so rank-by-class advice (``AdvisorRankByPriorHours``) reads the class the policy was shown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from advisor.condor.retry import Backoff
from advisor.ports import SinkRefused, refused_as
from plugins.contract.advice import Advice
from plugins.contract.job_ids import split_schedd


def idle_jobs_constraint(jobs: Sequence[str], owners: Sequence[str]) -> str:
    """The ClassAd constraint selecting ``jobs`` (``cluster.proc``) while idle, of ``owners``."""
    ids = ", ".join(f'"{job}"' for job in jobs)
    constraint = f'JobStatus == 1 && member(strcat(ClusterId, ".", ProcId), {{{ids}}})'
    if owners:
        constraint += " && member(Owner, {" + ", ".join(f'"{o}"' for o in owners) + "})"
    return constraint


def edit_idle(
    schedd: Any, jobs: Sequence[str], owners: Sequence[str], attr: str, value: int
) -> None:
    """Set ``attr`` of those of ``jobs`` still idle (an edit that matches nothing is an error
    to the schedd, so they are looked up first)."""
    idle = schedd.query(idle_jobs_constraint(jobs, owners), ["ClusterId", "ProcId"])
    if not idle:
        return
    with refused_as(
        f"the schedd did not set {attr} of {len(idle)} idle job(s)",
        "the advisor's token needs -authz WRITE and its identity must be a queue super user "
        "with a user record there (deploy/access-point, deploy/TOKENS.md), or set "
        "pool.edit_jobs: false",
    ):
        schedd.edit([f"{ad['ClusterId']}.{ad['ProcId']}" for ad in idle], attr, str(value))


def by_value(pairs: Sequence[tuple[str, int]]) -> dict[int, list[str]]:
    """Jobs grouped by the value they get: one edit per value."""
    grouped: dict[int, list[str]] = {}
    for job, value in pairs:
        grouped.setdefault(value, []).append(job)
    return dict(sorted(grouped.items()))


def jobs_on(pairs: Sequence[tuple[str, int]], name: str) -> list[tuple[str, int]]:
    """The (``cluster.proc``, value) of the jobs advised that may be on schedd ``name``."""
    local = ((split_schedd(job), value) for job, value in pairs)
    return [(job, value) for (job, schedd), value in local if schedd in ("", name)]


@dataclass
class ScheddJobSink:
    """``schedds`` gives the (name, handle) of each schedd this cycle (located anew: schedds
    restart); ``understated`` the source's idle jobs per schedd whose prior-hours class the
    pool's expression misses (``QueueTracker.understated``)."""

    schedds: Callable[[], list[tuple[str, Any]]]
    understated: Callable[[], Mapping[str, Mapping[str, int]]] = dict
    owners: tuple[str, ...] = ()
    max_edits: int = 100
    name: str = "schedd-jobprio"
    publishes_jobs: bool = True
    sent: dict[str, int] = field(default_factory=dict)
    """The ``JobPrio`` last set per job (jobs no longer advised are forgotten)."""
    held: dict[str, int] = field(default_factory=dict)
    """The ``AdvisorHoldUntil`` last set per job, until it passes (new advice without a hold
    lifts it: 0)."""
    needs: dict[str, int] = field(default_factory=dict)
    """``AdvisorNeedsHours`` advised and not yet sent (advice is given once; the budget waits)."""
    lookup: Backoff = field(default_factory=lambda: Backoff("the schedds (job edits)"))
    """When to locate the schedds again after the collector did not answer."""
    backoffs: dict[str, Backoff] = field(default_factory=dict)
    """Per schedd, when to try its edits again after it did not answer (a hung schedd costs
    ``pool.call_timeout_s`` once per backoff, not every cycle)."""

    def publish(self, advice: Advice, now: float) -> None:
        until = {job: a.hold_until for job, a in advice.jobs.items() if a.hold_until is not None}
        self.needs.update(
            (job, a.needs_hours) for job, a in advice.jobs.items() if a.needs_hours is not None
        )
        wanted = {
            job: round(a.prio)
            for job, a in advice.jobs.items()
            if job not in until and a.needs_hours is None
        }
        self.held = {job: t for job, t in self.held.items() if t > now}
        holds = [(job, int(t)) for job, t in until.items() if self.held.get(job) != int(t)]
        holds += [(job, 0) for job in advice.jobs if job in self.held and job not in until]
        holds = holds[: self.max_edits]  # first: a hold is of this moment, a priority waits
        classed = list(self.needs.items())[: self.max_edits - len(holds)]
        self.sent = {job: p for job, p in self.sent.items() if job in wanted}
        changed = [(job, p) for job, p in wanted.items() if self.sent.get(job) != p]
        changed = changed[: self.max_edits - len(holds) - len(classed)]
        budget = self.max_edits - len(holds) - len(classed) - len(changed)
        classes = {name: list(jobs.items()) for name, jobs in self.understated().items() if jobs}
        if not holds and not classed and not changed and not (classes and budget):
            return
        located = self.lookup.call(self.schedds, now)
        if located is None:  # (the backoff said why; all of it is sent once schedds answer)
            return
        edits = [("AdvisorHoldUntil", holds), ("AdvisorNeedsHours", classed), ("JobPrio", changed)]
        landed: set[str] = set()
        refusals: list[SinkRefused] = []
        for name, schedd in located:
            hours = classes.get(name, [])[:budget]
            budget -= len(hours)
            mine = [(attr, jobs_on(pairs, name)) for attr, pairs in edits]
            mine.append(("AdvisorPriorHours", hours))
            backoff = self.backoffs.setdefault(name, Backoff(f"schedd {name} (job edits)"))
            if backoff.call(partial(self._edit, schedd, mine, refusals), now):
                landed.add(name)

        def sent(job: str) -> bool:  # on its schedd, or on every one for a job not named so
            schedd = split_schedd(job)[1]
            return schedd in landed if schedd else len(landed) == len(located)

        self.held.update((job, t) for job, t in holds if sent(job))
        self.sent.update((job, p) for job, p in changed if sent(job))
        for job, _ in classed:  # (a job no longer idle keeps its own class)
            if sent(job):
                del self.needs[job]
        if refusals:
            raise refusals[0]

    def _edit(
        self,
        schedd: Any,
        edits: list[tuple[str, list[tuple[str, int]]]],
        refused: list[SinkRefused],
    ) -> bool:
        """Make ``edits`` (attribute, its (job, value) pairs) on one schedd; whether it took
        them all. A refusal is the administrator's to fix, not a schedd that failed to answer:
        kept in ``refused``, not left to the backoff."""
        try:
            for attr, pairs in edits:
                for value, jobs in by_value(pairs).items():
                    edit_idle(schedd, jobs, self.owners, attr, value)
        except SinkRefused as refusal:
            refused.append(refusal)
            return False
        return True
