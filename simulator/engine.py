"""A small discrete-event engine with an injected clock (the SimPy idea, without coroutines).

Pool models schedule callbacks; the engine only orders them in time. Sorted trace streams are fed
lazily (one pending entry per stream), so a year of 1.2 M owner sessions never sits in the heap.
The engine knows nothing about machines or jobs, so the campus and cluster models share it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator
from heapq import heappush
from typing import Any, Protocol

Callback = Callable[[Any], None]


class Clock(Protocol):
    """Where "now" comes from: the engine in a replay, the wall clock in the daemon."""

    def now(self) -> float: ...


class Engine:
    """Runs callbacks in time order; ties run in scheduling order (deterministic)."""

    def __init__(self, start: float) -> None:
        self.time = start
        """The current simulated time: what ``now()`` returns, read directly on hot paths."""
        self._heap: list[tuple[float, int, Callback, Any]] = []
        self._seq = itertools.count()
        self.events = 0

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
            nxt = next(stream, None)
            if nxt is not None:  # what ``at`` does, inline: a million trace items a month
                time, arg = nxt
                now = self.time
                heappush(heap, (time if time > now else now, next(seq), step, arg))

        first = next(stream, None)
        if first is not None:
            self.at(first[0], step, first[1])

    def pending(self) -> int:
        return len(self._heap)

    def run(self, until: float, on_advance: Callable[[float], None] | None = None) -> int:
        """Process events with time < ``until``; ``on_advance(t)`` sees each new time (progress)."""
        heap = self._heap
        pop = heapq.heappop
        processed = 0
        last = self.time
        while heap and heap[0][0] < until:
            when, _, callback, arg = pop(heap)
            self.time = when
            if on_advance is not None and when != last:
                on_advance(when)
                last = when
            callback(arg)
            processed += 1
        self.time = max(self.time, until)
        self.events += processed
        return processed
