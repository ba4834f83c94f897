"""systemd's watchdog (``WatchdogSec=`` in the unit): ``WATCHDOG=1`` while the timetable's jobs
come and go, none once one of them hangs, so that systemd restarts a daemon that is stuck rather
than dead (``Restart=`` sees only a death). A call to the pool cannot hang a job, it is ended after
``pool.call_timeout_s``; a deadlock or a stuck disk can.

Nor once a job stops coming: the timetable (APScheduler) counts by the wall clock, so a clock
stepped back an hour held every job for that hour, long enough for all advice to lapse while
``/healthz`` still said ok. A job not started for ``OVERDUE_TIMES`` its interval plus
``OVERDUE_GRACE_S`` stops the pings too; the restarted daemon's timetable starts from the clock
as it is.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger("htcondor_advisor.watchdog")
T = TypeVar("T")
OVERDUE_TIMES = 3
OVERDUE_GRACE_S = 60.0


def watchdog_interval() -> float | None:
    """Seconds between two pings as systemd asks (half its ``WATCHDOG_USEC``), or None: no
    watchdog, or one meant for another process."""
    usec = os.environ.get("WATCHDOG_USEC", "")
    pid = os.environ.get("WATCHDOG_PID", str(os.getpid()))
    if not usec.isdigit() or int(usec) == 0 or pid != str(os.getpid()):
        return None
    return int(usec) / 2e6


class Liveness:
    """Which periodic jobs are running, and since when (monotonic seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._since: dict[str, float] = {}
        self._lock = threading.Lock()
        self._every: dict[str, float] = {}
        """Each periodic job's interval, and when it last started (``_started``)."""
        self._started: dict[str, float] = {}

    def expect(self, name: str, every: float) -> None:
        """``name`` is due every ``every`` seconds from now on (at its start, or a reload)."""
        with self._lock:
            self._every[name] = every
            self._started[name] = self.clock()  # (its timetable starts again now)

    def watched(self, name: str, func: Callable[[], T]) -> Callable[[], T]:
        """``func`` as a job whose runs are watched under ``name``."""

        def run() -> T:
            with self._lock:
                self._since[name] = self._started[name] = self.clock()
            try:
                return func()
            finally:
                with self._lock:
                    self._since.pop(name, None)

        return run

    def stuck(self, limit: float) -> dict[str, float]:
        """The jobs running for longer than ``limit`` seconds, and for how long."""
        now = self.clock()
        with self._lock:
            return {n: now - t for n, t in self._since.items() if now - t > limit}

    def overdue(self) -> dict[str, float]:
        """The periodic jobs not running and not started for ``OVERDUE_TIMES`` their interval
        plus ``OVERDUE_GRACE_S``, and for how long."""
        now = self.clock()
        with self._lock:
            return {
                n: now - self._started[n]
                for n, every in self._every.items()
                if n not in self._since
                and now - self._started[n] > OVERDUE_TIMES * every + OVERDUE_GRACE_S
            }


class Watchdog:
    """Pings systemd every ``interval`` seconds unless a job has run for longer than twice
    that (the unit's whole ``WatchdogSec``), then says once which job stopped the pings."""

    def __init__(self, liveness: Liveness, interval: float, ping: Callable[[], object]) -> None:
        self.liveness, self.interval, self.ping = liveness, interval, ping
        self.last = -float("inf")
        self.silent = False

    def tick(self) -> None:
        now = self.liveness.clock()
        if now - self.last < self.interval:
            return
        stuck = self.liveness.stuck(2 * self.interval)
        overdue = self.liveness.overdue()
        if stuck or overdue:
            if not self.silent:
                for what, jobs in (("running too long", stuck), ("not started", overdue)):
                    said = ", ".join(f"{n} for {s:.0f} s" for n, s in sorted(jobs.items()))
                    if said:
                        log.error("job %s (%s): no watchdog ping, systemd restarts", what, said)
            self.silent = True
            return
        self.silent = False
        self.last = now
        self.ping()


def ping_while_alive(interval: float, ping: Callable[[], object]) -> threading.Thread:
    """The twin's pings: its simulation retrains inline, for as long as a pool's models take, so
    its progress is no cycle to watch; the pings stop with the process."""

    def loop() -> None:
        while True:
            ping()
            time.sleep(interval)

    thread = threading.Thread(target=loop, name="watchdog", daemon=True)
    thread.start()
    return thread
