"""systemd's watchdog (``WatchdogSec=`` in the unit): ``WATCHDOG=1`` while the timetable's jobs
come and go, none once one of them hangs, so that systemd restarts a daemon that is stuck rather
than dead (``Restart=`` sees only a death). A call to the pool cannot hang a job, it is ended after
``pool.call_timeout_s``; a deadlock or a stuck disk can.
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

    def watched(self, name: str, func: Callable[[], T]) -> Callable[[], T]:
        """``func`` as a job whose runs are watched under ``name``."""

        def run() -> T:
            with self._lock:
                self._since[name] = self.clock()
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
        if stuck:
            if not self.silent:
                jobs = ", ".join(f"{n} for {s:.0f} s" for n, s in sorted(stuck.items()))
                log.error("job running too long (%s): no watchdog ping, systemd restarts", jobs)
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
