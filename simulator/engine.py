"""A small discrete-event engine with an injected clock (the SimPy idea, without coroutines).

Pool models schedule callbacks; the engine only orders them in time. Sorted trace streams are fed
lazily (one pending entry per stream), so a year of 1.2 M owner sessions never sits in the heap,
and a fed item due before everything pending runs at once, without a trip through the heap (a
third of all owner sessions, nearly every job submission).
The engine knows nothing about machines or jobs, so the campus and cluster models share it.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterator
from heapq import heappush
from typing import Any

Callback = Callable[[Any], object]
"""What the engine runs; what it returns is not read."""


class Engine:
    """Runs callbacks in time order; ties run in scheduling order (deterministic)."""

    def __init__(self, start: float) -> None:
        self.time = start
        """The current simulated time: what ``now()`` returns, read directly on hot paths."""
        self._heap: list[tuple[float, int, Callback, Any]] = []
        self._seq = itertools.count()
        self.events = 0
        self._until = -math.inf
        """While ``run`` runs, its end; fed items run at once only before it."""
        self._on_advance: Callable[[float], None] | None = None

    def now(self) -> float:
        return self.time

    def at(self, time: float, callback: Callback, arg: Any = None) -> None:
        """Run ``callback(arg)`` at ``time`` (never earlier than now)."""
        when = time if time > self.time else self.time
        heappush(
            self._heap, (when, next(self._seq), callback, arg)
        )  # a bare name: ~0.7 M calls a month

    def feed(self, stream: Iterator[tuple[float, Any]], callback: Callback) -> None:
        """Deliver a time-sorted stream of ``(time, arg)`` pairs to ``callback`` one by one."""
        heap, seq = self._heap, self._seq

        def step(item: Any) -> None:
            callback(item)
            for time, arg in stream:
                now = self.time
                when = time if time > now else now
                if when >= self._until or (heap and when >= heap[0][0]):
                    heappush(heap, (when, next(seq), step, arg))  # ``at``, inline: millions
                    return
                # the next event anyway (nothing pending is due as early): run it now
                if when != now:
                    self.time = when
                    if self._on_advance is not None:
                        self._on_advance(when)
                self.events += 1
                callback(arg)

        first = next(stream, None)
        if first is not None:
            self.at(first[0], step, first[1])

    def run(self, until: float, on_advance: Callable[[float], None] | None = None) -> int:
        """Process events with time < ``until``; ``on_advance(t)`` sees each new time (progress).
        Returns how many ran."""
        heap = self._heap
        pop = heapq.heappop
        before, processed = self.events, 0
        self._until, self._on_advance = until, on_advance
        try:
            while heap:
                when, seq, callback, arg = pop(heap)
                if when >= until:  # not due: back in the heap (once a run, not a peek per event)
                    heappush(heap, (when, seq, callback, arg))
                    break
                if when != self.time:
                    self.time = when
                    if on_advance is not None:
                        on_advance(when)
                callback(arg)
                processed += 1
        finally:
            self._until, self._on_advance = -math.inf, None
            self.events += processed
        self.time = max(self.time, until)
        return self.events - before
