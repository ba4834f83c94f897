"""Queue-ordering policies of paper 002: the shared advice-building base, ``fifo`` and ``edf``.

Each policy scores every waiting job; the advice gives the jobs at the head of the order their
time utility if started now (eq. 1-3) and ``prio`` = their place from the end of that head
(HTCondor compares JobPrio only within a submitter, where this keeps the same order), plus
per-group priority-factor advice towards the configured shares (eq. 4).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from plugins.contract.advice import Advice, GroupAdvice, JobAdvice
from plugins.contract.events import AttemptEnded, AttemptStarted, Event, JobQueued, JobRemoved
from plugins.contract.policy import MachineInfo, Option, Policy, PolicyContext, PoolView
from plugins.utility.functions import MINUTE, check_shares, parse_shares, time_utility
from plugins.utility.queue_model import QueueModel

FACTOR_RANGE = (0.25, 4.0)
"""Priority-factor advice is a multiplier of the pool's base factor, kept within this range."""


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be > 0"


UTILITY_OPTIONS: dict[str, Option] = {
    "alpha": Option(0.5, float, "interactive utility decay per minute (eq. 2)", _positive),
    "beta": Option(0.3, float, "batch utility power-law exponent (eq. 3)", _positive),
    "sigma_min": Option(1.0, float, "startup time sigma in minutes (eq. 1)", _positive),
    "shares": Option(
        {}, parse_shares, "fair-share targets, e.g. vo0=0.7,vo1=0.2 (eq. 4)", check_shares
    ),
    "default_runtime_s": Option(
        3600.0, float, "execution time assumed when a job gives no estimate", _positive
    ),
    "publish_top": Option(100, int, "jobs at the head of the order that get a JobPrio", _positive),
}


class UtilityOrderingPolicy(Policy):
    """Base: keeps the queue model from events and turns per-job scores into advice."""

    OPTIONS: ClassVar[Mapping[str, Option]] = UTILITY_OPTIONS
    WANTS = frozenset({JobQueued, AttemptStarted, AttemptEnded, JobRemoved})
    SERVES = frozenset({"grid-queue"})

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        self.shares: dict[str, float] = self.options["shares"]
        self.model = QueueModel(
            sorted(self.shares), len(context.machines), self.options["default_runtime_s"]
        )
        self._published: set[str] = set()

    def machines_joined(self, machines: Sequence[MachineInfo]) -> None:
        """Idle processors (a state variable of paper 002) count every machine known."""
        self.model.processors = len(self.context.machines)

    def observe(self, event: Event) -> None:
        started = isinstance(event, AttemptStarted) and event.job_id in self.model.waiting
        self.model.observe(event, self.start_utility(event) if started else 1.0)

    def start_utility(self, event: Event) -> float:
        """Expected utility of a job starting now: its turnaround will be wait + runtime."""
        waiting = self.model.waiting
        i = waiting.row(event.job_id)  # type: ignore[union-attr]
        return float(self.utilities(event.time)[i])

    def utilities(self, now: float) -> np.ndarray:
        """Each waiting job's time utility if it started now (eq. 1-3)."""
        w = self.model.waiting
        n = len(w)
        runtime = w.runtime[:n]
        return time_utility(
            now - w.arrival[:n] + runtime,
            runtime,
            self.model.interactive(),
            alpha=self.options["alpha"],
            beta=self.options["beta"],
            sigma_min=self.options["sigma_min"],
        )

    @abstractmethod
    def scores(self, now: float) -> np.ndarray:
        """One score per waiting job (row order of the queue model); the highest runs first."""

    def advise(self, view: PoolView, now: float) -> Advice:
        """The next ``publish_top`` jobs get prio top..1 (first to run highest) and their utility;
        jobs that left that list are reset to prio 0, so a schedd's persisted JobPrio stays true.
        Publishing only the head keeps a decision O(queue) in numpy, not in advice objects."""
        advice = Advice(groups=self.group_advice(now))
        w = self.model.waiting
        top = self.options["publish_top"]
        scores = self.scores(now) if len(w) else np.zeros(0)
        head = np.argpartition(-scores, top)[:top] if len(w) > top else np.arange(len(w))
        head = head[np.argsort(-scores[head], kind="stable")]
        utility = self.utilities(now)[head].tolist()
        ids = [w.ids[i] for i in head.tolist()]
        advice.jobs = {
            job_id: JobAdvice(prio=float(top - k), utility=u)
            for k, (job_id, u) in enumerate(zip(ids, utility, strict=True))
        }
        for job_id in self._published.difference(advice.jobs):
            if job_id in w:
                advice.jobs[job_id] = JobAdvice(prio=0.0)
        self._published = set(ids)
        return advice

    def group_advice(self, now: float) -> dict[str, GroupAdvice]:
        """Factor = received / share: a group behind its share gets a smaller (better) factor."""
        received = self.model.received(now)
        out = {}
        for group, share in self.shares.items():
            if share <= 0:
                continue
            got = received.get(group, 0.0)
            factor = float(np.clip(got / share, *FACTOR_RANGE))
            out[group] = GroupAdvice(share=share, received=got, priority_factor=factor)
        return out


class FifoPolicy(UtilityOrderingPolicy):
    """First in, first out: the paper's baseline."""

    NAME = "fifo"

    def scores(self, now: float) -> np.ndarray:
        return -self.model.waiting.seq[: len(self.model.waiting)]


class EdfPolicy(UtilityOrderingPolicy):
    """Earliest deadline first, deadline a_j + tau_j + sigma (eq. 1): SARSA's warm-start teacher."""

    NAME = "edf"

    def scores(self, now: float) -> np.ndarray:
        return -edf_deadlines(self.model, self.options["sigma_min"])


def edf_deadlines(model: QueueModel, sigma_min: float) -> np.ndarray:
    """Absolute deadlines a_j + d_j of the waiting jobs, d_j = tau_j + sigma (eq. 1)."""
    w = model.waiting
    n = len(w)
    return w.arrival[:n] + w.runtime[:n] + sigma_min * MINUTE


class ShortestFirstPolicy(UtilityOrderingPolicy):
    """Shortest expected execution time first: the classic non-preemptive order for a low mean
    wait (optimal on one server), the reference for how much any reordering can gain."""

    NAME = "sjf"

    def scores(self, now: float) -> np.ndarray:
        return -self.model.waiting.runtime[: len(self.model.waiting)]
