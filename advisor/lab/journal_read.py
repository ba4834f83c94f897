"""The journal (``advisor.condor.journal``) read back for ``trace export``: every line and field
checked, so a damaged journal is one located error naming its file and line, not a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Collection, Iterator
from enum import Enum
from functools import cache, partial
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, get_args, get_type_hints

from advisor.condor.journal import JOURNAL_DIR, KINDS, events_file
from plugins.contract.events import Event
from plugins.contract.policy import MachineInfo
from simulator.traces.errors import TraceError


def read_events(
    state_dir: Path, until_byte: int | None = None, kinds: Collection[type] | None = None
) -> Iterator[Event]:
    """The journal's events in file order, those in its first ``until_byte`` bytes (a place in
    the journal, which counts the bytes cut off too) and of ``kinds`` only when given. A crash
    mid-write tears only the last line, which is skipped; an unreadable line elsewhere is damage,
    and a located error."""
    path, cut_off = events_file(Path(state_dir) / JOURNAL_DIR)
    if until_byte is not None:
        until_byte = max(until_byte - cut_off, 0)
    missing = "the events the advisor journals (none yet: export once it has observed some)"
    names = None if kinds is None else {kind.__name__ for kind in kinds}
    torn: tuple[int, str] | None = None
    events = 0
    for number, line in _lines(path, missing, until_byte):
        if not line.strip():
            continue
        if torn is not None:
            expected = "a JSON event (a crash cuts short only the last line: delete this one)"
            raise TraceError(path, torn[0], None, expected, torn[1])
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            torn = number, line.rstrip("\n")
            continue
        events += 1
        if names is None or not isinstance(raw, dict) or raw.get("kind") in names:
            yield _event(path, number, raw)
    if not events and until_byte is None:
        raise TraceError(path, None, None, missing, "no event")


def read_machines(state_dir: Path) -> dict[str, MachineInfo]:
    """The inventory, each machine checked as the events are."""
    path = Path(state_dir) / JOURNAL_DIR / "machines.json"
    missing = "the machines the advisor journals (none yet: export once it has seen the pool)"
    try:
        data = json.loads("".join(line for _, line in _lines(path, missing)))
    except json.JSONDecodeError as exc:
        expected = "a JSON object of machines (the advisor rewrites it whole as it sees them)"
        raise TraceError(path, exc.lineno, None, expected, exc.msg) from exc
    if not isinstance(data, dict):
        raise TraceError(path, None, None, "a JSON object of machines by name", json.dumps(data))
    if not data:
        raise TraceError(path, None, None, missing, "no machine")
    machines = {}
    for name, info in data.items():
        if not isinstance(info, dict):
            raise TraceError(path, None, name, "a JSON object (a machine)", json.dumps(info))
        where = partial(_in_machine, path, name)
        machines[name] = MachineInfo(**_checked(MachineInfo, info, "machine", where))
    return machines


PRIVATE = "a file this user can read (the journal is private: run as the advisor's user)"
Fail = Callable[[str, str, str | None], TraceError]
"""A located error from (field, expected, got)."""
AT_LEAST_ONE = {"cpus", "jobs_at_once"}


def _lines(path: Path, missing: str, until_byte: int | None = None) -> Iterator[tuple[int, str]]:
    """Numbered lines, those that end within ``until_byte`` bytes when given; a file that cannot
    be read is one located error (``missing``: what the error expected, when there is no such
    file)."""
    try:
        with open(path, "rb") as lines:
            read = 0
            for number, line in enumerate(lines, start=1):
                read += len(line)
                if until_byte is not None and read > until_byte:
                    return
                yield number, line.decode("utf-8")
    except FileNotFoundError as exc:
        raise TraceError(path, None, None, missing, "no such file") from exc
    except UnicodeDecodeError as exc:
        raise TraceError(path, None, None, "UTF-8 text", str(exc)) from exc
    except PermissionError as exc:
        raise TraceError(path, None, None, PRIVATE, str(exc)) from exc


def _event(path: Path, number: int, raw: object) -> Event:
    if not isinstance(raw, dict):
        raise TraceError(path, number, None, "a JSON object (an event)", json.dumps(raw))
    name = raw.pop("kind", None)
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        got = name if name is None or isinstance(name, str) else json.dumps(name)
        raise TraceError(path, number, "kind", f"one of {', '.join(sorted(KINDS))}", got)
    fields = _checked(kind, raw, f"{name} event", partial(TraceError, path, number))
    event: Event = kind(**fields)
    return event


def _in_machine(path: Path, machine: str, name: str, expected: str, got: str | None) -> TraceError:
    return TraceError(path, None, f"{machine}.{name}", expected, got)


def _checked(cls: type, raw: dict[str, Any], what: str, fail: Fail) -> dict[str, Any]:
    """``raw``'s fields as ``cls`` declares them (a whole number is a float too), so a damaged
    journal is refused where it is damaged rather than deep in the export."""
    declared = _declared(cls)
    for name in raw:
        if name not in declared:
            raise fail(name, f"one of a {what}'s fields: {', '.join(declared)}", None)
    fields = {}
    for name, (hint, required) in declared.items():
        if name in raw:
            fields[name] = _value(hint, raw[name], name, fail)
        elif required:
            raise fail(name, f"a value in every {what}; it is missing", None)
    return fields


@cache
def _declared(cls: type) -> dict[str, tuple[Any, bool]]:
    """Each field's type and whether it is required, worked out once per class: a year's
    journal has millions of lines, relearned at every start (``advisor.lab.relearn``; a campus
    year of 2.98 M owner and reboot events took 42.0 s with the types looked up per line, 26.0 s
    with this and ``_shown``)."""
    hints = get_type_hints(cls)
    return {
        f.name: (hints[f.name], f.default is dataclasses.MISSING) for f in dataclasses.fields(cls)
    }


@cache
def _values(enum: type[Enum]) -> tuple[Any, ...]:
    return tuple(member.value for member in enum)


def _shown(value: Any) -> str:
    """A refused value as the error shows it (made only for an error: millions of lines)."""
    return value if isinstance(value, str) else json.dumps(value)


def _value(hint: Any, value: Any, name: str, fail: Fail) -> Any:
    if isinstance(hint, UnionType):
        if value is None:
            return None
        hint = next(arg for arg in get_args(hint) if arg is not NoneType)
    if isinstance(hint, type) and issubclass(hint, Enum):
        if value not in _values(hint):
            raise fail(name, f"one of {', '.join(_values(hint))}", _shown(value))
        return hint(value)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if hint is float and not (number and math.isfinite(value) and value >= 0):
        raise fail(name, "a number of at least 0", _shown(value))
    least = int(name in AT_LEAST_ONE)
    if hint is int and not (number and isinstance(value, int) and value >= least):
        raise fail(name, f"a whole number of at least {least}", _shown(value))
    if hint in (str, bool) and not isinstance(value, hint):
        raise fail(name, "a string" if hint is str else "true or false", _shown(value))
    return float(value) if hint is float else int(value) if hint is int else value
