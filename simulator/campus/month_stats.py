"""Per-calendar-month counters (UTC), for the monthly series of the summary."""

from __future__ import annotations

import bisect
from collections import defaultdict
from datetime import UTC, datetime


def month_starts(start: float, end: float) -> list[float]:
    """Unix times of the first instant of each month overlapping [start, end), at least one.

    A year replayed up to New Year's midnight has twelve months, not an empty thirteenth.
    """
    first = datetime.fromtimestamp(start, UTC).replace(day=1, hour=0, minute=0, second=0)
    starts: list[float] = []
    year, month = first.year, first.month
    while True:
        t = datetime(year, month, 1, tzinfo=UTC).timestamp()
        if starts and t >= end:
            break
        starts.append(t)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return starts


class MonthStats:
    """Adds values under a key to the month of a time; ``rows()`` lists the months in order."""

    def __init__(self, start: float, end: float) -> None:
        self.starts = month_starts(start, end)
        self.labels = [datetime.fromtimestamp(t, UTC).strftime("%Y-%m") for t in self.starts]
        self.values: list[defaultdict[str, float]] = [defaultdict(float) for _ in self.starts]
        self._lo = self.starts[0] if self.starts else start
        self._hi = self.starts[1] if len(self.starts) > 1 else float("inf")
        self._i = 0

    def _index(self, t: float) -> int:
        if self._lo <= t < self._hi:
            return self._i
        i = max(0, bisect.bisect_right(self.starts, t) - 1)
        self._i, self._lo = i, self.starts[i]
        self._hi = self.starts[i + 1] if i + 1 < len(self.starts) else float("inf")
        return i

    def add(self, t: float, key: str, value: float) -> None:
        self.month(t)[key] += value

    def month(self, t: float) -> defaultdict[str, float]:
        """The counters of the month of ``t``, to add several values at once."""
        i = self._i if self._lo <= t < self._hi else self._index(t)  # mostly the current month
        return self.values[i]

    def rows(self) -> list[tuple[str, dict[str, float]]]:
        return [(label, dict(v)) for label, v in zip(self.labels, self.values, strict=True)]
