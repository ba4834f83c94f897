"""Retry with exponential backoff for a collector or schedd that does not answer.

The daemon's loop never blocks on a dead daemon: a failed call schedules the next attempt
(``base``, doubling up to ``cap`` seconds) and reports itself unhealthy until a call succeeds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger("htcondor_advisor.condor")


@dataclass
class Backoff:
    name: str
    base: float = 5.0
    cap: float = 300.0
    failures: int = 0
    next_try: float = 0.0

    @property
    def healthy(self) -> bool:
        return self.failures == 0

    def call(self, fn: Callable[[], T], now: float) -> T | None:
        """``fn()``, or None when it fails or when the backoff says not yet."""
        if now < self.next_try:
            return None
        try:
            result = fn()
        except Exception as exc:  # htcondor2 raises plain HTCondorException/IOError/ValueError
            self.failures += 1
            delay = min(self.cap, self.base * 2 ** (self.failures - 1))
            self.next_try = now + delay
            log.warning("%s did not answer (%s); retry in %.0f s", self.name, exc, delay)
            return None
        if self.failures:
            log.info("%s answers again after %d failures", self.name, self.failures)
        self.failures = 0
        self.next_try = 0.0
        return result
