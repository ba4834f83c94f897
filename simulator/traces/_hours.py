"""Inventory opening hours: ``"09:00-17:00"`` or ``closed`` per day key (mon, mon-fri, default).

Kept apart from the YAML walking so the day-key rules (each weekday exactly once, or by default)
can be read and tested on their own.
"""

from __future__ import annotations

import re

from simulator.trace_model import DAY, WEEKDAYS, OpeningHours

RANGE_EXPECTED = 'an "HH:MM-HH:MM" range (start before end, 24:00 allowed as end) or closed'
KEY_EXPECTED = "a day key: mon..sun, a range like mon-fri, or default"
_RANGE = re.compile(r"\s*(\d\d?):(\d\d)(?::(\d\d))?\s*-\s*(\d\d?):(\d\d)(?::(\d\d))?\s*")

Span = tuple[float, float] | None


class HoursError(ValueError):
    """Raised with the offending day key so the YAML reader can point at its line."""

    def __init__(self, key: str, expected: str, got: str | None) -> None:
        super().__init__(f"{key}: expected {expected}, got {got!r}")
        self.key, self.expected, self.got = key, expected, got


def parse_hours(spec: dict[str, str]) -> OpeningHours:
    """Day keys to hours; every weekday must be covered exactly once, by its key or ``default``."""
    days: list[Span | str] = ["unset"] * 7
    default: Span | str = "unset"
    for key, text in spec.items():
        span = parse_span(key, text)
        if key.strip().lower() == "default":
            default = span
            continue
        for d in _day_keys(key):
            if days[d] != "unset":
                raise HoursError(key, f"each weekday once ({WEEKDAYS[d]} is given twice)", key)
            days[d] = span
    if "unset" in days and default == "unset":
        missing = ",".join(WEEKDAYS[d] for d in range(7) if days[d] == "unset")
        raise HoursError("", f"hours for every weekday or a default (missing {missing})", None)
    filled = [default if d == "unset" else d for d in days]
    return OpeningHours(days=tuple(s for s in filled if not isinstance(s, str)))


def parse_span(key: str, text: str) -> Span:
    if text.strip().lower() == "closed":
        return None
    match = _RANGE.fullmatch(text)
    if match is None:
        raise HoursError(key, RANGE_EXPECTED, text)
    h0, m0, s0, h1, m1, s1 = (int(g) if g else 0 for g in match.groups())
    start, end = _seconds(h0, m0, s0), _seconds(h1, m1, s1)
    if start is None or end is None or start >= end or start >= DAY:
        raise HoursError(key, RANGE_EXPECTED, text)
    return (start, end)


def format_hours(hours: OpeningHours) -> str | dict[str, str]:
    """One string when all days are alike, else runs of equal days: ``{mon-fri: ..., sat: ...}``."""
    if len(hours.days) != 7:
        raise ValueError("opening hours need exactly 7 days")
    texts = [_format_span(s) for s in hours.days]
    if len(set(texts)) == 1:
        return texts[0]
    out: dict[str, str] = {}
    start = 0
    for d in range(1, 8):
        if d == 7 or texts[d] != texts[start]:
            key = WEEKDAYS[start] if d - 1 == start else f"{WEEKDAYS[start]}-{WEEKDAYS[d - 1]}"
            out[key] = texts[start]
            start = d
    return out


def _day_keys(key: str) -> list[int]:
    parts = key.strip().lower().split("-")
    if len(parts) > 2 or any(p not in WEEKDAYS for p in parts):
        raise HoursError(key, KEY_EXPECTED, key)
    first, last = WEEKDAYS.index(parts[0]), WEEKDAYS.index(parts[-1])
    if last < first:
        raise HoursError(key, KEY_EXPECTED + " (ranges run Monday to Sunday)", key)
    return list(range(first, last + 1))


def _seconds(h: int, m: int, s: int) -> float | None:
    if m >= 60 or s >= 60 or h > 24 or (h == 24 and (m or s)):
        return None
    return float(h * 3600 + m * 60 + s)


def _format_span(span: Span) -> str:
    if span is None:
        return "closed"
    if span[0] >= span[1]:
        raise ValueError(f"opening hours must start before they end, got {span!r}")
    return "-".join(_clock(t) for t in span)


def _clock(t: float) -> str:
    if not (0 <= t <= DAY and float(t).is_integer()):
        raise ValueError(f"opening hours must be whole seconds within a day, got {t!r}")
    h, rest = divmod(int(t), 3600)
    m, s = divmod(rest, 60)
    return f"{h:02d}:{m:02d}" + (f":{s:02d}" if s else "")
