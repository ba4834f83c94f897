"""Never-finishers told apart while they are still in the queue: one of the job's attempts already
ran longer than any completed job needed, and no job of its batch has completed.

Why not the share learned from the jobs that left the queue (fates.py): a neglected broken batch
runs for weeks before anyone removes it, so that share is learned too late to matter, and at the
hours where it is learned in time it also holds good long jobs (docs/robust-policies.md). This
test needs no fates. A good job completes in one attempt of its runtime, so an evicted attempt
longer than every runtime seen so far says the job needs more than any of n completed jobs did;
were it a good job, exchangeable with them, that chance would be 1/(n + 1). A completed job of
the same batch (a ``condor_submit``: its jobs are alike) clears the suspicion all the same.

The jobs of a batch are alike, so a suspect (whose batch has none completed) is a new batch
against the batches that completed one: its chance is 1/(b + 1) in the b batches, not in the n
jobs. Until ``trusted_batches`` have, the longest runtime may be a handful of batches' (a new
pool's first completions are the short jobs of its first batches), so a suspect is kept off only
once: a misjudged good job then waits at most one keep-off, within the starvation bound
(docs/robust-policies.md, "`frugal` 9").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.clock import DAY, HOUR
from plugins.contract.job_ids import batch_of

MIN_COMPLETED = 100
"""Completed jobs seen before the longest of them is trusted as the longest a job needs."""
TRUSTED_BATCHES = 100
"""Batches with a completed job before a suspect may be kept off at more than one eviction
(the default of ``frugal``'s ``trusted_batches``)."""
FORGET_S = 30 * DAY
"""A batch whose last completion is older than this is forgotten (its jobs have long left)."""


class NeverFinisherSuspects:
    def __init__(self, trusted_batches: int = TRUSTED_BATCHES) -> None:
        self.trusted_batches = trusted_batches
        self.longest_completed_s = 0.0
        self.completed_jobs = 0
        self.batches_done: dict[str, float] = {}
        """Per batch with a completed job, when its last job completed."""
        self.batches_counted = 0
        """Batches with a completed job, counted up to ``trusted_batches`` (none is forgotten
        before: ``batches_done`` is first pruned at 1024)."""
        self.kept_off_once: set[str] = set()
        """Suspects kept off before ``trusted_batches`` batches completed a job."""
        self._prune_at = 1024

    def completed(self, job_id: str, ran_s: float, now: float) -> None:
        self.longest_completed_s = max(self.longest_completed_s, ran_s)
        self.completed_jobs += 1
        batch = batch_of(job_id)
        if self.batches_counted < self.trusted_batches and batch not in self.batches_done:
            self.batches_counted += 1
            if self.batches_counted == self.trusted_batches:
                self.kept_off_once.clear()
        self.batches_done[batch] = now
        if len(self.batches_done) >= self._prune_at:
            self.batches_done = {b: t for b, t in self.batches_done.items() if now - t < FORGET_S}
            self._prune_at = 2 * max(len(self.batches_done), 512)

    def suspected(self, job_id: str, longest_attempt_s: float) -> bool:
        """Whether a job whose longest attempt ran ``longest_attempt_s`` surely never finishes."""
        return (
            self.completed_jobs >= MIN_COMPLETED
            and longest_attempt_s > self.longest_completed_s
            and batch_of(job_id) not in self.batches_done
        )

    def keeps_off(self, job_id: str) -> bool:
        """Whether a suspect evicted now is kept off: always once ``trusted_batches`` batches
        completed a job, before that only at its first such eviction (recorded here)."""
        if self.batches_counted >= self.trusted_batches:
            return True
        if job_id in self.kept_off_once:
            return False
        self.kept_off_once.add(job_id)
        return True

    def first_suspect_class(self) -> int:
        """The lowest prior-hours class all of whose jobs ran at least as long as any completed
        job needed (class k: a longest attempt of k to k+1 hours), PRIOR_HOURS_CLASSES for none;
        the batch is not asked, so a rare good job longer than any seen yet is among them."""
        if self.completed_jobs < MIN_COMPLETED:
            return PRIOR_HOURS_CLASSES
        return min(math.ceil(self.longest_completed_s / HOUR), PRIOR_HOURS_CLASSES)

    def state_dict(self) -> dict[str, Any]:
        return {
            "longest_completed_s": self.longest_completed_s,
            "completed_jobs": self.completed_jobs,
            "batches_done": dict(self.batches_done),
            "batches_counted": self.batches_counted,
            "kept_off_once": sorted(self.kept_off_once),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.longest_completed_s = float(state["longest_completed_s"])
        self.completed_jobs = int(state["completed_jobs"])
        self.batches_done = {str(b): float(t) for b, t in state["batches_done"].items()}
        # (a frugal 8 snapshot counted no batches: those it still knows are a lower bound)
        counted = state.get("batches_counted", len(self.batches_done))
        self.batches_counted = min(int(counted), self.trusted_batches)
        self.kept_off_once = set(state.get("kept_off_once", []))
        self._prune_at = 2 * max(len(self.batches_done), 512)
