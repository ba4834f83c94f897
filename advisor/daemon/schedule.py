"""The live daemon's timetable with APScheduler: observe, publish, snapshot and retrain jobs.

Every job has ``max_instances=1`` (a slow run is never overlapped by the next), ``coalesce`` (a
backlog of missed runs fires once) and a misfire grace of one interval; misfires and skipped
overlaps are logged and counted. Retraining has an executor of its own, so advice keeps flowing
from the other thread while a model is fitted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from advisor.daemon.runtime import Daemon
from advisor.daemon.signals import Control
from advisor.daemon.watchdog import Liveness, Watchdog, watchdog_interval

log = logging.getLogger("htcondor_advisor.schedule")


def build_scheduler(
    daemon: Daemon,
    clock: Callable[[], float],
    liveness: Liveness,
    refit_until: float | None = None,
) -> BackgroundScheduler:
    """``refit_until``: also fit, at once and in the background, the models a restart lost
    (snapshots keep none) on what was observed before that cut-off, theirs, rather than serve
    neutral advice until the next retraining; or, with the start as the cut-off, a retraining
    the schedule had while the daemon was down (advisor/lab/relearn.py). ``liveness`` watches
    the periodic jobs (not the retraining, which takes as long as the models do) for systemd's
    watchdog."""
    config, host = daemon.config, daemon.host
    scheduler = BackgroundScheduler(
        executors={"default": ThreadPoolExecutor(2), "retrain": ThreadPoolExecutor(1)},
        job_defaults={"coalesce": True, "max_instances": 1},
        timezone="UTC",
    )

    def every(name: str, seconds: float, func: Callable[[], object]) -> None:
        liveness.expect(name, seconds)
        scheduler.add_job(
            liveness.watched(name, func),
            "interval",
            seconds=seconds,
            id=name,
            name=name,
            misfire_grace_time=int(max(1, seconds)),
        )

    every("observe", config.learning["observe_interval"], lambda: host.observe(clock()))
    every("publish", config.publish["interval"], lambda: _timed_publish(daemon, clock))
    every("snapshot", config.state["snapshot_interval"], lambda: daemon.snapshot(clock()))
    scheduler.add_job(
        lambda: host.retrain(clock()),
        CronTrigger.from_crontab(config.learning["retrain"], timezone="UTC"),
        id="retrain",
        name="retrain",
        executor="retrain",
        misfire_grace_time=3600,
    )
    if refit_until is not None:
        until = refit_until
        scheduler.add_job(lambda: host.retrain(until), id="refit-at-start", executor="retrain")

    def on_event(event: JobEvent) -> None:
        if event.code == EVENT_JOB_ERROR:
            log.error("job %s failed: %r", event.job_id, getattr(event, "exception", None))
            return
        what = "missed its time" if event.code == EVENT_JOB_MISSED else "still running, skipped"
        log.warning("job %s %s", event.job_id, what)
        daemon.metrics.missed_runs.labels(event.job_id).inc()

    scheduler.add_listener(on_event, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES | EVENT_JOB_ERROR)
    return scheduler


def _reschedule(scheduler: BackgroundScheduler, daemon: Daemon, liveness: Liveness) -> None:
    """Apply reloaded intervals to the running timetable."""
    config = daemon.config
    for name, seconds in (
        ("observe", config.learning["observe_interval"]),
        ("publish", config.publish["interval"]),
        ("snapshot", config.state["snapshot_interval"]),
    ):
        scheduler.reschedule_job(name, trigger="interval", seconds=seconds)
        liveness.expect(name, seconds)
    scheduler.reschedule_job(
        "retrain", trigger=CronTrigger.from_crontab(config.learning["retrain"], timezone="UTC")
    )


def _timed_publish(daemon: Daemon, clock: Callable[[], float]) -> None:
    with daemon.metrics.cycle_seconds.time():
        daemon.host.publish(clock())


def run_live(
    daemon: Daemon,
    control: Control,
    reload: Callable[[], None],
    clock: Callable[[], float] = time.time,
    refit_until: float | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT: first cycle at once, then on the timetable; under a unit
    with ``WatchdogSec``, tell systemd the timetable's jobs still come and go."""
    from advisor.daemon.notify import sd_notify

    daemon.host.cycle(clock())
    address = daemon.start_endpoint()
    liveness = Liveness()
    scheduler = build_scheduler(daemon, clock, liveness, refit_until)
    interval = watchdog_interval()
    watchdog = Watchdog(liveness, interval, lambda: sd_notify("WATCHDOG=1")) if interval else None
    scheduler.start()
    sd_notify(f"READY=1\nSTATUS=serving advice on {address}")
    try:
        while not control.stop.wait(0.2):
            if watchdog is not None:
                watchdog.tick()
            if control.reload.is_set():
                control.reload.clear()
                sd_notify("RELOADING=1")
                reload()
                _reschedule(scheduler, daemon, liveness)
                sd_notify("READY=1")
    finally:
        sd_notify("STOPPING=1")
        # The snapshot first, then the wait for the jobs under way: a retraining takes minutes
        # on a large pool, past the unit's TimeoutStopSec, and one cut short is made up at the
        # next start (advisor/lab/relearn.py, missed_retraining).
        scheduler.pause()
        daemon.snapshot(clock())
        scheduler.shutdown(wait=True)
        daemon.stop_endpoint()
        log.info("stopped; snapshot saved in %s", daemon.store.directory)
