"""Fewer cyclic garbage collections while a replay runs.

A replay allocates millions of short-lived tuples and event objects, nearly all freed by reference
counting; at the default threshold (700 allocations) the collector runs thousands of times and
each older-generation pass walks the whole simulated pool. Raising the youngest threshold keeps the
collector for real cycles, and freezing what exists before the replay (the trace, the pool) keeps
full passes off it. Results do not depend on when garbage is collected.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 100_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the youngest generation's threshold for the block, then restore it."""
    saved = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *saved[1:])
    try:
        yield
    finally:
        gc.set_threshold(*saved)
        gc.unfreeze()
