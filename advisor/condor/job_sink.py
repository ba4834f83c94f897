"""Opt-in schedd sink (``pool.edit_jobs``): per-job advice as the ``JobPrio`` of idle jobs.

The negotiator offers a submitter's idle jobs in ``JobPrio`` order (higher first), so a policy
that orders the queue (``fifo``, ``edf``, ``utility-sarsa``: ``JobAdvice.prio``) acts on a live
pool only through this edit. Each cycle it edits only ``JobPrio``, only of idle jobs, only of
the ``owners`` the site named (all owners when none), and only where the advised value changed
since it was last sent, at most ``max_edits`` jobs: the schedd writes every edit to its job
queue log. The advisor's identity must be allowed to edit other users' jobs (a queue super user,
``deploy/access-point``). An edit the schedd refuses raises, and the daemon counts and logs it;
jobs not edited are sent again the next cycle. Job ids are ``cluster.proc``: with several
schedds, a job id advised is edited on each schedd where it is idle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from plugins.contract.advice import Advice


def idle_jobs_constraint(jobs: Sequence[str], owners: Sequence[str]) -> str:
    """The ClassAd constraint selecting ``jobs`` (``cluster.proc``) while idle, of ``owners``."""
    ids = ", ".join(f'"{job}"' for job in jobs)
    constraint = f'JobStatus == 1 && member(strcat(ClusterId, ".", ProcId), {{{ids}}})'
    if owners:
        constraint += " && member(Owner, {" + ", ".join(f'"{o}"' for o in owners) + "})"
    return constraint


@dataclass
class ScheddJobSink:
    """``schedds`` gives the schedd handles of this cycle (located anew: schedds restart)."""

    schedds: Callable[[], list[Any]]
    owners: tuple[str, ...] = ()
    max_edits: int = 100
    name: str = "schedd-jobprio"
    publishes_jobs: bool = True
    sent: dict[str, int] = field(default_factory=dict)
    """The ``JobPrio`` last set per job (jobs no longer advised are forgotten)."""

    def publish(self, advice: Advice, now: float) -> None:
        wanted = {job: round(a.prio) for job, a in advice.jobs.items()}
        self.sent = {job: p for job, p in self.sent.items() if job in wanted}
        changed = [(job, p) for job, p in wanted.items() if self.sent.get(job) != p]
        changed = changed[: self.max_edits]
        if not changed:
            return
        by_prio: dict[int, list[str]] = {}
        for job, prio in changed:
            by_prio.setdefault(prio, []).append(job)
        for schedd in self.schedds():
            for prio, jobs in sorted(by_prio.items()):
                constraint = idle_jobs_constraint(jobs, self.owners)
                idle = schedd.query(constraint, ["ClusterId", "ProcId"])
                if idle:  # an edit that matches nothing is an error to the schedd
                    ids = [f"{ad['ClusterId']}.{ad['ProcId']}" for ad in idle]
                    schedd.edit(ids, "JobPrio", str(prio))
        self.sent.update(changed)
