"""Value checks for the daemon's YAML: each failure names the key path, the bad value and what
is allowed (the scenario checks in ``plugins.contract.config_checks`` follow the same rule).
"""

from __future__ import annotations

import ipaddress
import math
import re
import socket
from pathlib import Path
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from plugins.contract.config_checks import ConfigError, fail, integer, number

DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([smhd]?)\s*$")
UNIT_S = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
DAY_S = 86400.0
MAX_DURATION_S = 30 * DAY_S
"""Longest duration any key takes unless it says otherwise: beyond it a value is a typo."""
MAX_SEED = 2**32 - 1
PORT = re.compile(r"^[0-9]{1,5}$")

__all__ = ["ConfigError", "fail", "integer", "number"]


def key_name(key: Any) -> str:
    """A mapping key as it goes into a key path: plain text as is, anything else quoted, so a
    path stays one readable line whatever the YAML held."""
    if isinstance(key, str) and key and key.isprintable() and not key.isspace():
        return key
    return repr(key)


def spell(seconds: float) -> str:
    """``86400.0`` as ``1d``, ``90.0`` as ``90s``: bounds in the units the file uses."""
    for unit in ("d", "h", "m"):
        if seconds >= UNIT_S[unit] and seconds % UNIT_S[unit] == 0:
            return f"{seconds / UNIT_S[unit]:g}{unit}"
    return f"{seconds:g}s"


def duration(raw: Any, path: str, lo: float = 0.001, hi: float = MAX_DURATION_S) -> float:
    """Seconds from a number or a string like ``90s``, ``5m``, ``1h``, ``2d``, finite and in
    ``[lo, hi]`` (``.inf``, ``.nan`` and huge values are typos, never "forever")."""
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        seconds = _finite(raw)
    else:
        match = DURATION.match(raw) if isinstance(raw, str) else None
        if match is None:
            raise fail(path, "must be seconds or a duration like 90s, 5m, 1h, 2d", raw)
        seconds = float(match.group(1)) * UNIT_S[match.group(2)]
    if not math.isfinite(seconds) or not lo <= seconds <= hi:
        raise fail(path, f"must be a duration from {spell(lo)} to {spell(hi)}", raw)
    return seconds


def _finite(raw: float) -> float:
    """``raw`` as a float; NaN for what no float holds (an integer of 400 digits)."""
    try:
        return float(raw)
    except OverflowError:
        return math.nan


def boolean(raw: Any, path: str) -> bool:
    if not isinstance(raw, bool):
        raise fail(path, "must be true or false", raw)
    return raw


def text(raw: Any, path: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise fail(path, "must be a non-empty string", raw)
    return raw.strip()


def file_path(raw: Any, path: str) -> Path:
    """A path as text (a NUL byte is no path: the system cuts it there)."""
    value = text(raw, path)
    if "\0" in value:
        raise fail(path, "must be a path without NUL characters", raw)
    return Path(value)


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
    host = host.strip("[]")
    if not sep or not host or not PORT.match(port) or int(port) > 65535:
        raise fail(path, "must be HOST:PORT with a port 0-65535, e.g. 127.0.0.1:9681", raw)
    if not host.isprintable() or any(c.isspace() for c in host):
        raise fail(path, "must be HOST:PORT with a host name or address, e.g. 127.0.0.1:9681", raw)
    return host, int(port)


NETWORKS = "a network (10.0.0.0/8), address or resolvable host name"


def networks(raw: Any, path: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Networks from a list (or one string) of CIDR networks, addresses and host names. A name
    becomes every address it resolves to now, once: the endpoint never waits on DNS for a
    request, and a host that moves needs a reload."""
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise fail(path, f"must be a list, each {NETWORKS}", raw)
    out: dict[ipaddress.IPv4Network | ipaddress.IPv6Network, None] = {}
    bad: list[str] = []
    for i, item in enumerate(items):
        try:
            out.update(dict.fromkeys(_network(item, f"{path}[{i}]")))
        except ConfigError as exc:
            bad.append(str(exc))
    if len(bad) == 1:
        raise ConfigError(bad[0])
    if bad:  # every one named at once: a list is fixed in one edit, not an entry per run
        entries = "; ".join(line.removeprefix(path).replace("]: ", "] ", 1) for line in bad)
        raise ConfigError(f"{path}: {len(bad)} bad entries: {entries}")
    return tuple(out)


def _network(raw: Any, path: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    value = text(raw, path)
    try:
        interface = ipaddress.ip_interface(value)
    except ValueError:
        pass
    else:
        if interface.ip != interface.network.network_address:
            raise ConfigError(
                f"{path}: {value!r} has host bits set; write the network "
                f"{interface.network} or the address {interface.ip}"
            )
        return [interface.network]
    try:
        found = socket.getaddrinfo(value, None, 0, socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{path}: {value!r} is not {NETWORKS} ({why})") from None
    return [ipaddress.ip_network(str(info[4][0]).split("%")[0]) for info in found]


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
    value = raw
    if isinstance(raw, str):
        try:
            value = float(raw)
        except ValueError:
            value = None
    try:
        return number(value, path, lo=0.0, lo_open=True)
    except ConfigError:
        raise fail(path, "must be 'max' or a number > 0 (simulated s per wall s)", raw) from None


def hour_or_none(raw: Any, path: str) -> float | None:
    """An hour of the day, 0 to below 24 (null: none)."""
    if raw is None:
        return None
    ok = isinstance(raw, int | float) and not isinstance(raw, bool) and 0 <= raw < 24
    if not ok:
        raise fail(path, "must be an hour of the day from 0 to below 24 (UTC), or null: none", raw)
    return float(raw)


def duration_or_none(raw: Any, path: str) -> float | None:
    """A duration from a minute to 30 days, as ``duration`` reads it (null: none)."""
    return None if raw is None else duration(raw, path, lo=60.0)


def seed(raw: Any, path: str) -> int:
    """A random seed, 0 to 2**32 - 1 (what every generator the policies use accepts)."""
    return integer(raw, path, hi=MAX_SEED)
