"""The other jobs of a batch one of whose jobs ran 23 hours without completing (frugal 7).

``frugal`` 6 starts a job that ran 23 hours, longer than any completed job needed, where an attempt
is stopped soonest: it can finish in no attempt a daily reboot allows (cut_short.py). The jobs of
its batch (one ``condor_submit``) are alike, so they are as surely never-finishers: ``frugal`` 7
ranks them in that class from their next start (``JobAdvice.needs_hours``: ``AdvisorNeedsHours``,
which ``ADVISOR_CLASS`` takes when it is more than the job's own class) and keeps them off after
each eviction as a suspect. A completed job of the batch clears it, and its jobs get their own
class back (``needs_hours = 0``).

Why only from 23 hours: marked from any attempt longer than every completed job, a batch of good
long jobs was cut short over and over (``long-jobs`` seed 2, scale 0.25: two jobs of batch 20
were started 243 and 245 times over 240 days, as no job of it could complete to clear it;
docs/robust-policies.md).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

from plugins.contract.job_ids import batch_of
from plugins.frugal.suspects import FORGET_S


class CutShortBatches:
    """Marked batches and, per batch, the jobs advised to rank in the cut-short class."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        """Off (option ``cut_short_batches``): no batch is marked (frugal 6)."""
        self.marked: dict[str, float] = {}
        """Per batch one of whose jobs ran the cut-short class, when it was last seen to."""
        self.raised: dict[str, set[str]] = {}
        """Per marked batch, its jobs advised ``needs_hours`` and still in the queue."""
        self._prune_at = 64

    def mark(self, job_id: str, now: float) -> None:
        self.marked[batch_of(job_id)] = now
        if len(self.marked) >= self._prune_at:  # a batch long unseen has left the queue
            self.marked = {
                b: t for b, t in self.marked.items() if now - t < FORGET_S or b in self.raised
            }
            self._prune_at = 2 * max(len(self.marked), 32)

    def includes(self, job_id: str, done: Container[str]) -> bool:
        """Whether the job's batch is marked and no job of it has completed (``done``)."""
        batch = batch_of(job_id)
        return self.enabled and batch in self.marked and batch not in done

    def is_raised(self, job_id: str) -> bool:
        return job_id in self.raised.get(batch_of(job_id), ())

    def raise_class(self, job_id: str) -> None:
        self.raised.setdefault(batch_of(job_id), set()).add(job_id)

    def left(self, job_id: str) -> None:
        """The job left the queue (removed, or completed)."""
        jobs = self.raised.get(batch_of(job_id))
        if jobs is not None:
            jobs.discard(job_id)
            if not jobs:
                del self.raised[batch_of(job_id)]

    def cleared(self, job_id: str) -> list[str]:
        """A job completed: its batch is unmarked, and these of its jobs get their class back."""
        batch = batch_of(job_id)
        self.marked.pop(batch, None)
        return sorted(self.raised.pop(batch, set()) - {job_id})

    def state_dict(self) -> dict[str, Any]:
        raised = {batch: sorted(jobs) for batch, jobs in self.raised.items()}
        return {"marked": dict(self.marked), "raised": raised}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.marked = {str(b): float(t) for b, t in state["marked"].items()}
        self.raised = {str(b): set(jobs) for b, jobs in state["raised"].items()}
        self._prune_at = 2 * max(len(self.marked), 32)
