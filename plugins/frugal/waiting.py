"""The jobs waiting per prior-hours class, which the payback hold expects to share the safest
machines, one job per core (payback.py, ``payback_queue``; frugal 11), a job that requests k cores
as k such jobs (frugal 12).

Counted from the policy's own events (a job queued, started or gone), so that the replay and the
daemon count alike. A wait is counted for a day at most (``payback.MAX_WAIT_H``): by then the
starvation bound a site is advised to set matches the job as without advice, so it no longer
waits for the rooms advice keeps it to, and a job that left the queue unseen (a user's hold, a
removal the daemon missed) is forgotten at the latest then.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.clock import HOUR
from plugins.contract.events import (
    EVICTIONS,
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
)
from plugins.contract.policy import as_one_core_jobs
from plugins.frugal.fates import JobFates
from plugins.frugal.payback import MAX_WAIT_H

GONE = (AttemptOutcome.COMPLETED, AttemptOutcome.REMOVED)
"""The outcomes after which a job is never queued again (its start may have gone unseen)."""


class WaitingJobs:
    def __init__(self) -> None:
        self.waits: dict[str, tuple[int, float]] = {}
        """Per waiting job, its class and when its wait began."""
        self.cpus: dict[str, int] = {}
        """Per waiting job that requests more than one core, its cores."""

    def observe(self, event: Event, longest_s: Mapping[str, float]) -> None:
        """A wait begins at a submission or an eviction (in the class of the job's longest attempt,
        ``longest_s``) and ends at a start or a removal. The replay and the daemon both report a
        requeue as a ``JobQueued``, which says the job's cores again; the wait itself is counted
        at the eviction, and the two may come in either order within a daemon's cycle. Cores
        are kept for a waiting job only (``by_class`` forgets the others), so a started job
        whose end is never seen is not remembered for good."""
        if isinstance(event, JobQueued) and not event.prior_attempts:
            self.waits[event.job_id] = (0, event.time)
        elif isinstance(event, AttemptEnded) and event.outcome in EVICTIONS:
            k = JobFates.class_of(longest_s.get(event.job_id, 0.0))
            self.waits[event.job_id] = (k, event.time)
        elif isinstance(event, AttemptStarted | JobRemoved) or (
            isinstance(event, AttemptEnded) and event.outcome in GONE
        ):
            self.waits.pop(event.job_id, None)
            self.cpus.pop(event.job_id, None)
        if isinstance(event, JobQueued) and event.cpus > 1:
            self.cpus[event.job_id] = event.cpus

    def by_class(self, now: float, most_at_once: int) -> np.ndarray:
        """One-core jobs per class whose wait began within the last day (older ones are
        forgotten), a k-core job as ``as_one_core_jobs`` says."""
        oldest = now - MAX_WAIT_H * HOUR
        for job in [job for job, (_, since) in self.waits.items() if since < oldest]:
            del self.waits[job]  # (one that left unseen is not kept for good)
        for job in [job for job in self.cpus if job not in self.waits]:
            del self.cpus[job]
        counts = np.zeros(PRIOR_HOURS_CLASSES)
        for job, (k, _) in self.waits.items():
            counts[k] += as_one_core_jobs(self.cpus.get(job, 1), most_at_once)
        return counts

    def state_dict(self) -> dict[str, Any]:
        return {"waits": {job: list(wait) for job, wait in self.waits.items()}, "cpus": self.cpus}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Also a snapshot written before frugal 12, which had the waits alone (one core each)."""
        waits, cpus = (state["waits"], state["cpus"]) if "waits" in state else (state, {})
        self.waits = {job: (int(k), float(since)) for job, (k, since) in waits.items()}
        self.cpus = {job: int(n) for job, n in cpus.items()}
