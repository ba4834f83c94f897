"""The memoised closing times give the day-by-day scan's answer to the bit, for any week."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from simulator.trace_model import DAY, ClosingTimes, OpeningHours, scan_closing

edges = st.sampled_from([0.0, 1.0, 8 * 3600.0, 9.5 * 3600.0, 17 * 3600.0, DAY - 1.0, DAY])
spans = st.one_of(st.none(), st.tuples(edges, edges).filter(lambda s: s[0] < s[1]))
weeks = st.tuples(*[spans] * 7).map(OpeningHours)
times = st.floats(min_value=1.26e9, max_value=1.27e9, allow_nan=False)


@given(weeks, st.lists(times, min_size=1, max_size=30))
def test_memoised_closing_equals_the_scan(hours: OpeningHours, ts: list[float]) -> None:
    closing = ClosingTimes(hours)
    for t in ts + [t - t % DAY + 17 * 3600.0 for t in ts]:  # and exactly at a closing edge
        assert closing.next_closing(t) == scan_closing(hours.days, t)


def test_a_room_open_round_the_clock_never_closes() -> None:
    assert ClosingTimes(OpeningHours.always()).next_closing(1.265e9) == float("inf")


def test_a_closed_room_is_closed_now_and_an_open_one_at_its_closing_hour() -> None:
    nine_to_five = OpeningHours(((9 * 3600.0, 17 * 3600.0),) * 7)
    monday_noon = 1262563200.0 + 12 * 3600.0  # 2010-01-04 12:00 UTC
    assert ClosingTimes(nine_to_five).next_closing(monday_noon) == monday_noon + 5 * 3600.0
    evening = monday_noon + 8 * 3600.0
    assert ClosingTimes(nine_to_five).next_closing(evening) == evening
