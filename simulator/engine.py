"""A small discrete-event engine with an injected clock (the SimPy idea, without coroutines).

Pool models schedule callbacks; the engine only orders them in time. Sorted trace streams are fed
lazily (one pending entry per stream), so a year of 1.2 M owner sessions never sits in the heap.
The engine knows nothing about machines or jobs, so the campus and cluster models share it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from heapq import heappop, heappush
from typing import Any, Protocol

Callback = Callable[[Any], None]


class Clock(Protocol):
    """Where "now" comes from: the engine in a replay, the wall clock in the daemon."""

    def now(self) -> float: ...


class Engine:
    """Runs callbacks in time order; ties run in scheduling order (deterministic)."""

    def __init__(self, start: float) -> None:
        self._now = start
        self._heap: list[tuple[float, int, Callback, Any]] = []
        self._next_seq = itertools.count().__next__
        self.events = 0

    def now(self) -> float:
        return self._now

    def at(self, time: float, callback: Callback, arg: Any = None) -> None:
        """Run ``callback(arg)`` at ``time`` (never earlier than now)."""
        now = self._now
        heappush(self._heap, (time if time > now else now, self._next_seq(), callback, arg))

    def feed(self, stream: Iterator[tuple[float, Any]], callback: Callback) -> None:
        """Deliver a time-sorted stream of ``(time, arg)`` pairs to ``callback`` one by one."""
        _Feed(self, stream, callback).pull()

    def pending(self) -> int:
        return len(self._heap)

    def run(self, until: float, on_advance: Callable[[float], None] | None = None) -> int:
        """Process events with time < ``until``; ``on_advance(t)`` sees each new time (progress)."""
        heap = self._heap
        processed = 0
        last = self._now
        while heap and heap[0][0] < until:
            when, _, callback, arg = heappop(heap)
            self._now = when
            if on_advance is not None and when != last:
                on_advance(when)
                last = when
            callback(arg)
            processed += 1
        self._now = max(self._now, until)
        self.events += processed
        return processed


class _Feed:
    """One lazily fed stream: only its next entry waits in the heap, scheduled when the previous
    one has run (so ties with other events keep the order of a plain ``at`` at that moment)."""

    __slots__ = ("_at", "_callback", "_step", "_stream")

    def __init__(self, engine: Engine, stream: Iterator[tuple[float, Any]], callback: Callback):
        self._at = engine.at
        self._stream = stream
        self._callback = callback
        self._step = self.step

    def step(self, item: Any) -> None:
        """Deliver ``item``, then schedule the next entry (after it, as ties demand)."""
        self._callback(item)
        self.pull()

    def pull(self) -> None:
        nxt = next(self._stream, None)
        if nxt is not None:
            self._at(nxt[0], self._step, nxt[1])
