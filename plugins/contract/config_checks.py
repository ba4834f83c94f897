"""Checks shared by scenario configurations: each names the key path and what is allowed.

Unknown keys are errors, so a typo never silently falls back to a default; and the person editing
the YAML is the only one who can fix a value, so each message says where it is and what would do.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


class ConfigError(ValueError):
    """A campus configuration value is missing, unknown or out of range."""


def fail(path: str, what: str, got: Any) -> ConfigError:
    """One line naming the key; a long value (a section pasted as text) is shown shortened."""
    shown = repr(got)
    if len(shown) > 200:
        shown = shown[:150] + f"... ({len(shown)} characters)"
    return ConfigError(f"{path}: {what}, got {shown}")


def mapping(raw: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    if not isinstance(raw, dict):
        raise fail(path or "<top>", "must be a mapping", raw)
    allowed = required + optional
    for key in raw:
        if key not in allowed:
            raise fail(
                f"{path}.{key}".lstrip("."), f"unknown key; allowed: {', '.join(allowed)}", key
            )
    for key in required:
        if key not in raw:
            raise ConfigError(f"{path}.{key}".lstrip(".") + ": missing (required)")
    return raw


def number(
    raw: Any, path: str, lo: float = 0.0, hi: float = float("inf"), lo_open: bool = False
) -> float:
    ok = isinstance(raw, int | float) and not isinstance(raw, bool) and _finite(raw)
    if not ok or not (lo < raw if lo_open else lo <= raw) or raw > hi:
        bound = f"{'>' if lo_open else '>='} {lo}" + (f" and <= {hi}" if hi != float("inf") else "")
        raise fail(path, f"must be a number {bound}", raw)
    return float(raw)


def _finite(raw: float) -> bool:
    """Neither infinite nor NaN, and small enough for a float (``.inf`` is never meant)."""
    try:
        return math.isfinite(raw)
    except OverflowError:
        return False


def integer(raw: Any, path: str, lo: int = 0, hi: int | None = None) -> int:
    if (
        not isinstance(raw, int)
        or isinstance(raw, bool)
        or raw < lo
        or (hi is not None and raw > hi)
    ):
        bound = f">= {lo}" if hi is None else f"from {lo} to {hi}"
        raise fail(path, f"must be an integer {bound}", raw)
    return raw


def date_value(raw: Any, path: str) -> dt.date:
    if isinstance(raw, dt.date) and not isinstance(raw, dt.datetime):
        return raw
    try:
        return dt.date.fromisoformat(str(raw))
    except ValueError:
        raise fail(path, "must be a date YYYY-MM-DD", raw) from None


def clock(raw: str, path: str) -> float:
    try:
        hh, mm = raw.split(":")
        sec = int(hh) * 3600 + int(mm) * 60
    except ValueError:
        raise fail(path, "must be HH:MM", raw) from None
    if not 0 <= sec <= 86400 or not 0 <= int(mm) < 60:
        raise fail(path, "must be a time between 00:00 and 24:00", raw)
    return float(sec)


def hourly_shape(raw: Any, path: str) -> tuple[float, ...]:
    if not isinstance(raw, list) or len(raw) != 24:
        raise fail(path, "must be a list of 24 numbers >= 0 (one per hour, 00-23)", raw)
    vals = tuple(number(v, f"{path}[{i}]") for i, v in enumerate(raw))
    if sum(vals) <= 0:
        raise fail(path, "must not be all zero", raw)
    return vals


def day_indices(key: str, path: str) -> list[int]:
    parts = key.split("-")
    if len(parts) > 2 or any(p not in DAY_NAMES for p in parts):
        raise fail(
            path, f"day key must be one of {', '.join(DAY_NAMES)} or a range like mon-fri", key
        )
    a, b = DAY_NAMES.index(parts[0]), DAY_NAMES.index(parts[-1])
    if b < a:
        raise fail(path, "day range must run forwards (e.g. mon-fri)", key)
    return list(range(a, b + 1))


def week_hours(raw: Any, path: str) -> tuple[tuple[float, float] | None, ...]:
    if not isinstance(raw, dict) or not raw:
        raise fail(path, "must map days (mon, mon-fri, ...) to 'HH:MM-HH:MM'", raw)
    days: list[tuple[float, float] | None] = [None] * 7
    for key, span in raw.items():
        kpath = f"{path}.{key}"
        if not isinstance(span, str) or span.count("-") != 1:
            raise fail(kpath, "must be 'HH:MM-HH:MM' (e.g. '09:00-17:00', '00:00-24:00')", span)
        a, b = (clock(s.strip(), kpath) for s in span.split("-"))
        if a >= b:
            raise fail(kpath, "opening must be before closing on the same day", span)
        for d in day_indices(str(key), kpath):
            days[d] = (a, b)
    return tuple(days)


@dataclass(frozen=True, slots=True)
class LogNormal:
    """A lognormal given by its median and log-space sigma, clipped to ``[lo, hi]``."""

    median: float
    sigma: float
    lo: float
    hi: float


def lognormal(raw: Any, path: str) -> LogNormal:
    """A ``{median, sigma, min, max}`` mapping at ``path`` as a ``LogNormal``."""
    m = mapping(raw, path, ("median", "sigma", "min", "max"))
    lo, hi = number(m["min"], f"{path}.min"), number(m["max"], f"{path}.max", lo_open=True)
    if lo > hi:
        raise fail(f"{path}.max", f"must be >= min ({lo})", hi)
    median = number(m["median"], f"{path}.median", lo_open=True)
    return LogNormal(median, number(m["sigma"], f"{path}.sigma"), lo, hi)
