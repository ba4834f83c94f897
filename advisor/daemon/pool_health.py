"""Whether the pool answered the last poll, and what the log says of it.

Advice is renewed only from a view the pool confirmed: the collector and at least one schedd
answered. Schedds that did not while others did are named, and advice goes on with their last
known queue: one access point down for a reboot should not take the advice of the whole pool
with it. Each condition is said when it begins, changes or an hour on, and when it ends.
"""

from __future__ import annotations

from advisor.daemon.logs import iso
from advisor.daemon.metrics import DaemonMetrics
from advisor.daemon.recurring import Recurring
from advisor.ports import Observation


class PoolHealth:
    def __init__(self, metrics: DaemonMetrics, recurring: Recurring) -> None:
        self.metrics = metrics
        self.recurring = recurring
        self.healthy = True
        """Whether the last poll of the pool answered."""
        self.unanswered_since: float | None = None
        """When the pool first did not answer, while it still does not."""
        self.silent_schedds: tuple[str, ...] = ()
        """Schedds that did not answer the last poll while others did."""

    def polled(self, obs: Observation, now: float) -> bool:
        """Take in a poll's answer; whether its view confirms the pool."""
        self.healthy = obs.healthy
        self.metrics.pool_healthy.set(1 if obs.healthy else 0)
        if not obs.healthy:
            self.unanswered_since = self.unanswered_since or now
            since = iso(self.unanswered_since)
            text = f"pool did not answer at {since}; advice will lapse if this persists"
            self.recurring.say("pool", text, now)
            return False
        self.unanswered_since = None
        self.recurring.ended("pool", f"pool answers again at {iso(now)}")
        self.silent_schedds = tuple(obs.unanswered)
        self.metrics.schedds_unanswered.set(len(obs.unanswered))
        if obs.unanswered:
            names = ", ".join(obs.unanswered)
            text = f"schedd(s) {names} did not answer; advice goes on with their last known queue"
            self.recurring.say("schedds", text, now)
        else:
            self.recurring.ended("schedds", f"every schedd answers again at {iso(now)}")
        return True
