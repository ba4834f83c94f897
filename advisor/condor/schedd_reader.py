"""One schedd as the pool source reads it: the epoch ads of attempts written since its cursor,
its idle and running queue, and the history records of the idle jobs that left that queue."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.condor.epochs import EPOCH_PROJECTION, epoch_key
from advisor.condor.job_queue import QUEUE_CONSTRAINT, QUEUE_PROJECTION, QueueTracker
from advisor.condor.removals import REMOVAL_PROJECTION, removal_query, settle
from advisor.condor.retry import Backoff
from plugins.contract.events import Event

EPOCH_REREAD_S = 120.0
"""How far behind the newest epoch ad each poll reads again. Concurrent shadows append epoch
ads out of ``EpochWriteDate`` order (each stamps its time, then waits for the file), so an ad
may land after one written later; ads inside the window are told apart by identity."""


@dataclass
class ScheddReader:
    """One schedd: epochs since ``cursor`` (newest write time, ids seen within the re-read
    window) and its queue."""

    name: str
    connect: Callable[[], Any]
    backoff: Backoff
    cursor_time: float = 0.0
    seen: dict[str, float] = field(default_factory=dict)
    """Identity -> write time of every epoch ad read within ``EPOCH_REREAD_S`` of the cursor."""
    queue: QueueTracker = field(default_factory=QueueTracker)

    def __post_init__(self) -> None:
        self.history_backoff = Backoff(f"{self.backoff.name} history")

    def epochs(self, now: float) -> list[Mapping[str, Any]] | None:
        horizon = self.cursor_time - EPOCH_REREAD_S
        since = f"EpochWriteDate < {int(horizon)}" if self.cursor_time else None
        ads = self.backoff.call(
            lambda: self.connect().jobEpochHistory(projection=list(EPOCH_PROJECTION), since=since),
            now,
        )
        if ads is None:
            return None
        keyed = sorted(  # (by key alone: two ads of one attempt written at one second tie)
            ((k, ad) for ad in ads if (k := epoch_key(ad)) is not None), key=lambda pair: pair[0]
        )
        fresh = list({ident: ad for (_, ident), ad in keyed if ident not in self.seen}.values())
        self.seen.update((ident, t) for (t, ident), _ in keyed)
        if keyed:
            self.cursor_time = max(self.cursor_time, keyed[-1][0][0])
        horizon = self.cursor_time - EPOCH_REREAD_S
        self.seen = {ident: t for ident, t in self.seen.items() if t >= horizon}
        return fresh

    def jobs(self, now: float) -> list[Mapping[str, Any]] | None:
        return self.backoff.call(
            lambda: self.connect().query(QUEUE_CONSTRAINT, list(QUEUE_PROJECTION)), now
        )

    def removals(self, now: float) -> list[Event]:
        """``JobRemoved`` of the idle or held jobs that left the queue, once their history records
        appear. Best effort, with its own backoff: a history that does not answer costs
        removals only (the policies forget a wait after a day), never the poll."""
        events, left = settle(self.queue.removed, self.queue.left, now)
        if left:
            constraint, since = removal_query(left)
            projection = list(REMOVAL_PROJECTION)
            ads = self.history_backoff.call(
                lambda: self.connect().history(constraint, projection, since=since), now
            )
            from_history, left = settle(ads or [], left, now)
            events += from_history
        self.queue.left = left
        return events

    def state(self) -> dict[str, Any]:
        return {
            "cursor_time": self.cursor_time,
            "seen": sorted(self.seen.items()),
            "queue": self.queue.state(),
        }

    def load(self, state: Mapping[str, Any]) -> None:
        self.cursor_time = float(state.get("cursor_time", 0.0))
        self.seen = {ident: float(t) for ident, t in state.get("seen", [])}
        self.seen.update((ident, self.cursor_time) for ident in state.get("cursor_ids", []))
        # Saved before identities named their schedd: the same ads, read again, now carry it.
        self.seen.update({f"{self.name}#{i}": t for i, t in self.seen.items() if "#" not in i})
        self.queue.load(state.get("queue", {}))
