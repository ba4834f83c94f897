"""Property tests of the event engine: time order, stable ties, lazy streams, horizon."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from simulator.engine import Engine

times = st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), max_size=60)


@given(times)
def test_events_run_in_time_order_and_ties_in_scheduling_order(ts: list[float]) -> None:
    engine = Engine(0.0)
    seen: list[tuple[float, int]] = []
    for i, t in enumerate(ts):
        engine.at(t, lambda i: seen.append((engine.now(), i)), i)
    assert engine.run(float("inf")) == len(ts)
    assert seen == sorted(((t, i) for i, t in enumerate(ts)), key=lambda x: (x[0], x[1]))


@given(times, times)
def test_streams_interleave_with_scheduled_events(a: list[float], b: list[float]) -> None:
    engine = Engine(0.0)
    seen: list[float] = []
    engine.feed(iter((t, t) for t in sorted(a)), lambda t: seen.append(engine.now()))
    for t in b:
        engine.at(t, lambda _: seen.append(engine.now()))
    engine.run(float("inf"))
    assert seen == sorted(a + b)
    assert engine.run(float("inf")) == 0  # nothing left


@given(times, st.floats(min_value=0, max_value=1e6))
def test_run_stops_before_the_horizon_and_resumes(ts: list[float], horizon: float) -> None:
    engine = Engine(0.0)
    fired: list[float] = []
    for t in ts:
        engine.at(t, fired.append, t)
    engine.run(horizon)
    assert all(t < horizon for t in fired)
    assert engine.now() >= horizon
    engine.run(float("inf"))
    assert sorted(fired) == sorted(ts)


def test_a_callback_may_schedule_into_the_past_and_runs_now() -> None:
    engine = Engine(10.0)
    seen: list[float] = []
    engine.at(20.0, lambda _: engine.at(5.0, lambda _: seen.append(engine.now())))
    engine.run(100.0)
    assert seen == [20.0]


def feed_through_heap(
    engine: Engine, stream: Iterator[tuple[float, Any]], callback: Callable[[Any], None]
) -> None:
    """The reference order of ``Engine.feed``: every fed item takes a trip through the heap."""

    def step(item: Any) -> None:
        callback(item)
        nxt = next(stream, None)
        if nxt is not None:
            engine.at(nxt[0], step, nxt[1])

    first = next(stream, None)
    if first is not None:
        engine.at(first[0], step, first[1])


def _trace(
    a: list[int], b: list[int], c: list[int], horizon: int, through_heap: bool = False
) -> list[Any]:
    """What runs when (ties abound: whole-number times), in two runs split at ``horizon``; fed
    by ``Engine.feed``, or ``through_heap``."""
    engine = Engine(0.0)
    seen: list[Any] = []

    def arrive(tag: str) -> Callable[[Any], None]:
        def callback(item: Any) -> None:
            seen.append((tag, item, engine.now()))
            if item % 3 == 0:  # some arrivals schedule a follow-up, some at the same time
                engine.at(engine.now() + item % 2, lambda _: seen.append(("then", item)))

        return callback

    for stream, tag in ((a, "a"), (b, "b")):
        items = iter((float(t), t) for t in sorted(stream))
        if through_heap:
            feed_through_heap(engine, items, arrive(tag))
        else:
            engine.feed(items, arrive(tag))
    for t in c:
        engine.at(float(t), arrive("c"), t)
    advanced: list[float] = []
    counts = [engine.run(float(horizon), advanced.append), engine.run(float("inf"))]
    return [seen, advanced, counts, engine.events]


small = st.lists(st.integers(min_value=-3, max_value=12), max_size=25)


@given(small, small, small, st.integers(min_value=0, max_value=12))
def test_fed_items_run_exactly_when_they_would_through_the_heap(
    a: list[int], b: list[int], c: list[int], horizon: int
) -> None:
    assert _trace(a, b, c, horizon) == _trace(a, b, c, horizon, through_heap=True)
