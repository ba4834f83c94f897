"""Column converters shared by the readers: numpy speed, with the first bad cell located on failure.

Every converter takes the source line of each row, so an error names the file, line and field
even though the happy path converts a whole column in one numpy call.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from os import PathLike

import numpy as np

from simulator.traces.errors import TraceError

TIME_EXPECTED = "unix seconds or an ISO-8601 time with zone, like 2010-01-04T09:13:00Z"
LATEST_S = 1e11
"""A unix time past this (the year 5138) is milliseconds, or finer, written as seconds."""
MILLISECONDS_EXPECTED = "unix seconds (this looks like milliseconds: divide by 1000)"
_BOOLS = {"": False, "0": False, "1": True, "false": False, "true": True, "no": False, "yes": True}

Path_ = str | PathLike[str]


def parse_floats(
    col: Sequence[str],
    path: Path_,
    lines: np.ndarray,
    field: str,
    expected: str,
    *,
    minimum: float | None = None,
) -> np.ndarray:
    """Finite floats (optionally >= ``minimum``); the first bad cell raises a located TraceError."""
    try:
        arr = np.array(col, dtype=np.float64)
    except ValueError:
        arr = np.fromiter(
            (_float(s, path, int(lines[i]), field, expected) for i, s in enumerate(col)),
            dtype=np.float64,
            count=len(col),
        )
    _check_range(arr, col, path, lines, field, expected, minimum)
    return arr


def parse_times(col: Sequence[str], path: Path_, lines: np.ndarray, field: str) -> np.ndarray:
    """Unix seconds, or ISO-8601 with a zone (naive times are ambiguous and rejected)."""
    try:
        arr = np.array(col, dtype=np.float64)
    except ValueError:
        arr = np.fromiter(
            (_time(s, path, int(lines[i]), field) for i, s in enumerate(col)),
            dtype=np.float64,
            count=len(col),
        )
    _check_range(arr, col, path, lines, field, TIME_EXPECTED, None)
    late = arr > LATEST_S
    if late.any():
        i = int(np.argmax(late))
        raise TraceError(path, int(lines[i]), field, MILLISECONDS_EXPECTED, col[i])
    return arr


def parse_bools(col: Sequence[str], path: Path_, lines: np.ndarray, field: str) -> np.ndarray:
    """true/false, yes/no, 1/0 (any case, spaces allowed); empty is false."""
    values = list(map(_BOOLS.get, col))
    if None in values:
        for i, value in enumerate(values):
            if value is None:
                value = _BOOLS.get(col[i].strip().lower())
                if value is None:
                    expected = "true/false, yes/no, 1/0 or empty"
                    raise TraceError(path, int(lines[i]), field, expected, col[i])
                values[i] = value
    return np.array(values, dtype=bool)


def format_numbers(values: np.ndarray, *, inf_as_empty: bool = False) -> list[str]:
    """Shortest round-trip text per value; whole numbers without '.0' (times stay readable)."""
    out = [str(int(x)) if x.is_integer() else repr(x) for x in values.tolist()]
    if inf_as_empty:
        for i in np.flatnonzero(np.isposinf(values)).tolist():
            out[i] = ""
    return out


def _check_range(
    arr: np.ndarray,
    col: Sequence[str],
    path: Path_,
    lines: np.ndarray,
    field: str,
    expected: str,
    minimum: float | None,
) -> None:
    bad = ~np.isfinite(arr)
    if minimum is not None:
        bad |= arr < minimum
    if bad.any():
        i = int(np.argmax(bad))
        raise TraceError(path, int(lines[i]), field, expected, col[i])


def _float(s: str, path: Path_, line: int, field: str, expected: str) -> float:
    try:
        return float(s)
    except ValueError:
        raise TraceError(path, line, field, expected, s) from None


def _time(s: str, path: Path_, line: int, field: str) -> float:
    try:
        return float(s)
    except ValueError:
        pass
    try:
        stamp = datetime.fromisoformat(s.strip())
    except ValueError:
        raise TraceError(path, line, field, TIME_EXPECTED, s) from None
    if stamp.tzinfo is None:
        raise TraceError(path, line, field, TIME_EXPECTED + " (a zone is required)", s)
    return stamp.timestamp()
