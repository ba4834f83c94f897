"""Value checks for the daemon's YAML: each failure names the key path, the bad value and what
is allowed (the scenario checks in ``simulator.scenarios.config_checks`` follow the same rule).
"""

from __future__ import annotations

import re
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from simulator.scenarios.config_checks import ConfigError, fail, integer, number

DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
UNIT_S = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

__all__ = ["ConfigError", "fail", "integer", "number"]


def duration(raw: Any, path: str, lo: float = 0.001) -> float:
    """Seconds from a number or a string like ``90s``, ``5m``, ``1h``, ``2d``."""
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        seconds = float(raw)
    else:
        match = DURATION.match(str(raw)) if isinstance(raw, str) else None
        if match is None:
            raise fail(path, "must be seconds or a duration like 90s, 5m, 1h, 2d", raw)
        seconds = float(match.group(1)) * UNIT_S[match.group(2)]
    if seconds < lo:
        raise fail(path, f"must be at least {lo} s", raw)
    return seconds


def boolean(raw: Any, path: str) -> bool:
    if not isinstance(raw, bool):
        raise fail(path, "must be true or false", raw)
    return raw


def text(raw: Any, path: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise fail(path, "must be a non-empty string", raw)
    return raw.strip()


def choice(raw: Any, path: str, allowed: tuple[str, ...]) -> str:
    if raw not in allowed:
        raise fail(path, f"must be one of {', '.join(allowed)}", raw)
    return str(raw)


def text_list(raw: Any, path: str) -> list[str]:
    if not isinstance(raw, list):
        raise fail(path, "must be a list of strings", raw)
    return [text(item, f"{path}[{i}]") for i, item in enumerate(raw)]


def address(raw: Any, path: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6); port 0 picks a free one."""
    value = text(raw, path)
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise fail(path, "must be HOST:PORT with a port 0-65535, e.g. 127.0.0.1:9681", raw)
    return host.strip("[]"), int(port)


def cron(raw: Any, path: str) -> str:
    """A five-field crontab expression (minute hour day month weekday), evaluated in UTC."""
    value = text(raw, path)
    try:
        CronTrigger.from_crontab(value, timezone="UTC")
    except ValueError as exc:
        raise fail(path, f"must be a crontab expression like '0 0 1 * *' ({exc})", raw) from None
    return value


def speed(raw: Any, path: str) -> float | None:
    """Simulated seconds per wall second, or ``max`` (None: as fast as possible)."""
    if raw == "max":
        return None
    if isinstance(raw, str):
        try:
            raw = float(raw)
        except ValueError:
            raise fail(
                path, "must be 'max' or a number > 0 (simulated s per wall s)", raw
            ) from None
    return number(raw, path, lo=0.0, lo_open=True)
