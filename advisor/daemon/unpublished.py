"""Advice that no configured sink publishes: counted, and said once, rather than dropped silently.

Group advice reaches no sink, job advice only the opt-in schedd sink (``pool.edit_jobs``), and
"wake" advice only the collector merge: a sleeping startd runs no hook, so its offline ad, where
condor_rooster reads ``AdvisorPower``, carries only what is merged into it (deploy/power).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from advisor.daemon.metrics import DaemonMetrics
from advisor.ports import AdviceSink
from plugins.contract.advice import Advice, PowerAdvice

log = logging.getLogger("htcondor_advisor.host")


FIXES = {
    "job": " (pool.edit_jobs: true publishes it)",
    "wake": " (a sleeping machine runs no hook: give the advisor a token with NEGOTIATOR and"
    " pool.merge: true, deploy/TOKENS.md)",
}


class Unpublished:
    def __init__(self, metrics: DaemonMetrics) -> None:
        self.metrics = metrics
        self.said: set[str] = set()

    def count(self, decided: Advice, sinks: Sequence[AdviceSink], policy: str) -> None:
        sent = {
            "job": any(getattr(sink, "publishes_jobs", False) for sink in sinks),
            "group": False,
            "wake": any(getattr(sink, "reaches_sleeping", False) for sink in sinks),
        }
        wakes = [m for m, a in decided.machines.items() if a.power is PowerAdvice.WAKE]
        for kind, entries in (("job", decided.jobs), ("group", decided.groups), ("wake", wakes)):
            if entries and not sent[kind]:
                self.metrics.unpublished.labels(kind).inc(len(entries))
                if kind not in self.said:
                    self.said.add(kind)
                    log.warning(
                        "%s gives %s advice, which no configured sink publishes%s",
                        policy,
                        kind,
                        FIXES.get(kind, ""),
                    )
