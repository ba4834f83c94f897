"""Signals as flags the main loop reads: SIGTERM/SIGINT stop (after a snapshot), SIGHUP reloads."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

log = logging.getLogger("htcondor_advisor.signals")


class Control:
    def __init__(self) -> None:
        self.stop = threading.Event()
        self.reload = threading.Event()

    def install(self) -> None:
        """Route the signals here (call from the main thread)."""
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGHUP, self._reload)

    def _stop(self, signum: int, _: FrameType | None) -> None:
        log.info("%s: saving a snapshot and stopping", signal.Signals(signum).name)
        self.stop.set()

    def _reload(self, signum: int, _: FrameType | None) -> None:
        log.info("SIGHUP: reloading the configuration")
        self.reload.set()
