"""Prometheus metrics of one daemon, in a registry of its own (served on ``/metrics``).

Ages are computed at scrape time from the injected clock, so the twin reports simulated ages.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class DaemonMetrics:
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.registry = CollectorRegistry()
        r = self.registry
        self.cycle_seconds = Histogram(
            "advisor_cycle_seconds",
            "Wall seconds of one observe-decide-publish cycle",
            buckets=(0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
            registry=r,
        )
        self.events = Counter(
            "advisor_events", "Events fed to the policy host, by kind", ["kind"], registry=r
        )
        self.decisions = Counter("advisor_decisions", "Machine advice entries computed", registry=r)
        self.learned = Counter(
            "advisor_events_learned",
            "Events handed to the policy's observe, by kind (what it learns from)",
            ["kind"],
            registry=r,
        )
        self.rewards = Counter(
            "advisor_attempt_outcomes",
            "Ended job attempts by outcome (the learning signal of the reward)",
            ["outcome"],
            registry=r,
        )
        self.served = Counter(
            "advisor_advice_served", "Advice answers served, by format", ["format"], registry=r
        )
        self.forbidden = Counter(
            "advisor_requests_forbidden",
            "Requests refused with 403, by the list that would admit the peer "
            "(publish.allow or publish.admin)",
            ["list"],
            registry=r,
        )
        self.unpublished = Counter(
            "advisor_advice_unpublished",
            "Job and group advice computed but published by no sink, by kind",
            ["kind"],
            registry=r,
        )
        self.publish_failures = Counter(
            "advisor_publish_failures", "Failed publications, by sink", ["sink"], registry=r
        )
        self.missed_runs = Counter(
            "advisor_job_misfires",
            "Scheduled jobs skipped (misfire or overlap)",
            ["job"],
            registry=r,
        )
        self.pool_healthy = Gauge(
            "advisor_pool_healthy",
            "1 when the last poll confirmed the pool; 0 when the collector or every schedd did not",
            registry=r,
        )
        self.schedds_unanswered = Gauge(
            "advisor_schedds_unanswered",
            "Schedds that did not answer the last poll while others did (advice goes on)",
            registry=r,
        )
        self.advice_stale = Gauge(
            "advisor_advice_stale",
            "1 while no view was confirmed within publish.stale_after (advice is not renewed)",
            registry=r,
        )
        self.unwakeable = Gauge(
            "advisor_machines_unwakeable",
            "Sleeping machines left out of the advice because they did not wake when advised",
            registry=r,
        )
        self.last_observation: float | None = None
        self.last_retrain: float | None = None
        self.last_snapshot: float | None = None
        self.started = clock()
        for name, doc, since in (
            ("advisor_seconds_since_observation", "Since the last successful poll", "observation"),
            ("advisor_model_age_seconds", "Since the last retrain (or start)", "retrain"),
            ("advisor_snapshot_age_seconds", "Since the last snapshot was written", "snapshot"),
        ):
            gauge = Gauge(name, doc, registry=r)
            gauge.set_function(self._age(since))

    def _age(self, what: str) -> Callable[[], float]:
        def age() -> float:
            stamp = getattr(self, f"last_{what}")
            if stamp is None:
                stamp = self.started if what == "retrain" else float("nan")
            return self.clock() - stamp

        return age

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
