"""Property tests of the event engine: time order, stable ties, lazy streams, horizon."""

from __future__ import annotations

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
    assert engine.pending() == 0


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
