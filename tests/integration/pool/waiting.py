"""Bounded waits for the real pools' tests: every loop ends, and a timeout says what it was."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest


def wait_for(
    check: Callable[[], Any],
    timeout: float,
    what: str,
    every: float = 1.0,
    explain: Callable[[], str] | None = None,
) -> Any:
    """``check()``'s first truthy result within ``timeout`` seconds, else fail naming ``what``
    (and adding ``explain()``: what the state was, so that a rare timeout can be read)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            state = f"\n{explain()}" if explain else ""
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}{state}")
        time.sleep(every)
