"""Failure Trace Archive ``event_trace.tab``: node up/down intervals, replayed as unavailability.

FTA rows are intervals, not point events: each says a node was available (event_type 1) or
unavailable (0) from event_start_time to event_stop_time (unix seconds). Only the down intervals
matter to the replay; machines are identified by ``node_id`` because ``node_name`` is not unique in
real traces (LANL's "system.node" names were written as floats, so 18.83 and 18.830 collide).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from simulator.trace_model import Cluster, Inventory, MachineSpec, OpeningHours, Unavailability
from simulator.traces._columns import Path_, parse_floats
from simulator.traces._io import read_text, split_lines
from simulator.traces.errors import TraceError

FTA_COLUMNS = (
    "event_id", "component_id", "node_id", "platform_id", "node_name",
    "event_type", "event_start_time", "event_stop_time", "event_end_reason",
)  # fmt: skip
DOWN, UP = 0, 1
NULL_REASON = -1
"""``event_end_reason`` is NULL in some FTA exports; it is stored as -1."""


@dataclass(slots=True)
class FtaTrace:
    """The intervals of an FTA event trace in file order, as numpy columns."""

    path: str
    line: np.ndarray
    event_id: np.ndarray
    component_id: np.ndarray
    node_id: np.ndarray
    platform_id: np.ndarray
    node_name: list[str]
    event_type: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    end_reason: np.ndarray

    def __len__(self) -> int:
        return len(self.line)


def read_fta(path: Path_) -> FtaTrace:
    """Parse ``event_trace.tab`` (header line, then 9 tab/space separated columns; may be .gz)."""
    lines = split_lines(read_text(path))
    rows: list[list[str]] = []
    numbers: list[int] = []
    header_seen = False
    for number, text in enumerate(lines, start=1):
        tokens = text.split()
        if not tokens:
            continue
        if not header_seen:
            if tuple(tokens) != FTA_COLUMNS:
                expected = "the FTA header line: " + " ".join(FTA_COLUMNS)
                raise TraceError(path, number, None, expected, text.strip())
            header_seen = True
            continue
        if len(tokens) != len(FTA_COLUMNS):
            field = FTA_COLUMNS[len(tokens)] if len(tokens) < len(FTA_COLUMNS) else None
            raise TraceError(path, number, field, f"{len(FTA_COLUMNS)} columns", text.strip())
        rows.append(tokens)
        numbers.append(number)
    if not header_seen:
        raise TraceError(path, None, None, "the FTA header line", "an empty file")
    line = np.array(numbers, dtype=np.int64)
    cols = list(zip(*rows, strict=True)) if rows else [() for _ in FTA_COLUMNS]
    ints = {name: _ints(path, line, name, cols[j]) for j, name in enumerate(FTA_COLUMNS)
            if name not in ("node_name", "event_start_time", "event_stop_time")}  # fmt: skip
    start = parse_floats(cols[6], path, line, "event_start_time", "unix seconds")
    stop = parse_floats(cols[7], path, line, "event_stop_time", "unix seconds")
    bad = (ints["event_type"] != DOWN) & (ints["event_type"] != UP)
    if bad.any():
        i = int(np.argmax(bad))
        raise TraceError(path, int(line[i]), "event_type", "0 (down) or 1 (up)", cols[5][i])
    early = stop < start
    if early.any():
        i = int(np.argmax(early))
        expected = f"a time at or after event_start_time ({cols[6][i]})"
        raise TraceError(path, int(line[i]), "event_stop_time", expected, cols[7][i])
    return FtaTrace(
        path=str(path),
        line=line,
        event_id=ints["event_id"],
        component_id=ints["component_id"],
        node_id=ints["node_id"],
        platform_id=ints["platform_id"],
        node_name=list(cols[4]),
        event_type=ints["event_type"].astype(np.int8),
        start=start,
        stop=stop,
        end_reason=ints["event_end_reason"],
    )


def fta_unavailability(
    fta: FtaTrace, node_ids: Iterable[int] | None = None, limit: int | None = None
) -> tuple[Inventory, Unavailability]:
    """One always-open machine ``node-<id>`` per node and its down intervals, sorted by start.

    ``node_ids`` picks nodes (in that order; unknown ids raise ValueError), default all in
    ascending id order; ``limit`` keeps the first that many. Machines are type ``normal``
    (2 cores, 57/40/2 W active/idle/sleep) in one cluster ``fta`` that is always open.
    """
    present = np.unique(fta.node_id)
    if node_ids is None:
        chosen = present.tolist()
    else:
        chosen = list(dict.fromkeys(int(n) for n in node_ids))
        missing = sorted(set(chosen) - set(present.tolist()))
        if missing:
            raise ValueError(f"node ids not in the FTA trace {fta.path}: {missing[:10]}")
    if limit is not None:
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        chosen = chosen[:limit]
    machines = [MachineSpec(f"node-{n}", "fta", "normal", 2, 57.0, 40.0, 2.0) for n in chosen]
    inventory = Inventory(
        clusters={"fta": Cluster("fta", OpeningHours.always())}, machines=machines
    )
    index = {n: i for i, n in enumerate(chosen)}
    down = np.flatnonzero(fta.event_type == DOWN)
    machine = np.array([index.get(n, -1) for n in fta.node_id[down].tolist()], dtype=np.int32)
    keep = machine >= 0
    down, machine = down[keep], machine[keep]
    order = np.lexsort((machine, fta.start[down]))
    rows = down[order]
    return inventory, Unavailability(machine[order], fta.start[rows], fta.stop[rows])


def unrecorded(fta: FtaTrace, inventory: Inventory, start: float, end: float) -> int:
    """How many of ``inventory``'s nodes have no interval within [start, end): replayed as up
    throughout, though the trace may not yet (or no longer) list them."""
    within = (fta.start < end) & (fta.stop > start)
    seen = {f"node-{n}" for n in np.unique(fta.node_id[within]).tolist()}
    return sum(m.name not in seen for m in inventory.machines)


def _ints(path: Path_, line: np.ndarray, field: str, col: tuple[str, ...]) -> np.ndarray:
    """Whole numbers (``10.000`` style is accepted when integral); NULL only for the end reason."""
    out = np.empty(len(col), dtype=np.int64)
    nullable = field == "event_end_reason"
    for i, token in enumerate(col):
        if nullable and token.upper() == "NULL":
            out[i] = NULL_REASON
            continue
        try:
            value = float(token)
            ok = value.is_integer() and abs(value) < 2.0**62
        except ValueError:
            ok = False
        if not ok:
            expected = "an integer" + (" or NULL" if nullable else "")
            raise TraceError(path, int(line[i]), field, expected, token)
        out[i] = int(value)
    return out
