"""The pool inventory as YAML: machine types (cores, watts, memory), clusters (opening hours,
slots), machines (which may override any of them).

Read from the composed node tree rather than ``safe_load`` so every error carries the YAML line
and a field path such as ``machines[3].type``, and duplicate keys are caught instead of the last
one silently winning.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, NoReturn

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from simulator.trace_model import (
    SINGLE,
    SLOT_LAYOUTS,
    Cluster,
    Inventory,
    MachineSpec,
    OpeningHours,
)
from simulator.traces._columns import Path_
from simulator.traces._hours import RANGE_EXPECTED, HoursError, format_hours, parse_hours
from simulator.traces._io import read_text, write_text
from simulator.traces.errors import TraceError

POWER_KEYS = ("cores", "active", "idle", "sleep")
OWN_KEYS = ("memory", "slots")
"""A machine's own memory (MB) and slot layout (else its type's memory, its cluster's slots)."""
MEMORY_EXPECTED = "a positive number of MB"
SLOTS_EXPECTED = f"one of {', '.join(SLOT_LAYOUTS)}"
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_HEADER = "# Pool inventory: types give cores and watts per state; machines may override them.\n"


class _Doc:
    """One YAML document being read: knows its path, locates nodes, raises TraceErrors."""

    def __init__(self, path: Path_) -> None:
        self.path = path

    def fail(
        self, node: Node | None, field: str | None, expected: str, got: str | None
    ) -> NoReturn:
        line = node.start_mark.line + 1 if node is not None else None
        raise TraceError(self.path, line, field, expected, got)

    def mapping(
        self, node: Node, field: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> dict[str, Node]:
        items = self.items(node, field)
        for key, (key_node, _) in items.items():
            if key not in required and key not in optional:
                allowed = ", ".join(required + optional)
                self.fail(key_node, _join(field, key), f"one of the keys {allowed}", key)
        for key in required:
            if key not in items:
                self.fail(node, _join(field, key), f"a '{key}' key", None)
        return {k: v for k, (_, v) in items.items()}

    def items(self, node: Node, field: str) -> dict[str, tuple[Node, Node]]:
        """A mapping's entries by key (scalar keys only, no duplicates), in file order."""
        if not isinstance(node, MappingNode):
            self.fail(node, field, "a mapping", _text(node))
        out: dict[str, tuple[Node, Node]] = {}
        for key_node, value in node.value:
            key = self.name(key_node, field)
            if key in out:
                self.fail(key_node, _join(field, key), "each key once", "a duplicate key")
            out[key] = (key_node, value)
        return out

    def name(self, node: Node, field: str) -> str:
        ok = isinstance(node, ScalarNode) and not node.tag.endswith(":null")
        if not (ok and _printable(node.value)):
            self.fail(node, field, "a non-empty printable name", _text(node))
        return str(node.value)

    def layout(self, node: Node, field: str) -> str:
        if not (isinstance(node, ScalarNode) and node.value in SLOT_LAYOUTS):
            self.fail(node, field, SLOTS_EXPECTED, _text(node))
        return str(node.value)

    def memory(self, node: Node, field: str) -> float:
        value = self.number(node, field, expected=MEMORY_EXPECTED)
        if value <= 0:
            self.fail(node, field, MEMORY_EXPECTED, _text(node))
        return value

    def number(
        self, node: Node, field: str, *, integer: bool = False, expected: str | None = None
    ) -> float:
        if expected is None:
            expected = "a positive whole number" if integer else "a non-negative number of watts"
        value: Any = None
        if isinstance(node, ScalarNode) and node.tag in _NUMBER_TAGS:
            try:
                value = SafeConstructor().construct_object(node)
            except (ConstructorError, ValueError):
                value = None
        ok = isinstance(value, int | float) and math.isfinite(value)
        ok = ok and (value >= 1 and float(value).is_integer() if integer else value >= 0)
        if not ok:
            self.fail(node, field, expected, _text(node))
        return float(value)


def read_inventory(path: Path_) -> Inventory:
    """Parse and validate an inventory YAML file (see docs/trace-formats.md)."""
    doc = _Doc(path)
    root = _compose(path, read_text(path))
    if root is None:
        raise TraceError(path, None, None, "a mapping with types, clusters and machines", "empty")
    top = doc.mapping(root, "", ("types", "clusters", "machines"))
    types: dict[str, tuple[float, ...]] = {}
    for name, (_, node) in doc.items(top["types"], "types").items():
        where = f"types.{name}"
        keys = doc.mapping(node, where, POWER_KEYS, ("memory",))
        power = [doc.number(keys[k], f"{where}.{k}", integer=k == "cores") for k in POWER_KEYS]
        memory = doc.memory(keys["memory"], f"{where}.memory") if "memory" in keys else math.inf
        types[name] = (*power, memory)
    clusters: dict[str, Cluster] = {}
    layouts: dict[str, str] = {}
    for name, (_, node) in doc.items(top["clusters"], "clusters").items():
        keys = doc.mapping(node, f"clusters.{name}", ("hours",), ("slots",))
        clusters[name] = Cluster(name, _hours(doc, keys["hours"], f"clusters.{name}.hours"))
        slots = keys.get("slots")
        layouts[name] = SINGLE if slots is None else doc.layout(slots, f"clusters.{name}.slots")
    machines = _machines(doc, top["machines"], types, clusters, layouts)
    return Inventory(clusters=clusters, machines=machines)


def _machines(
    doc: _Doc,
    node: Node,
    types: dict[str, tuple[float, ...]],
    clusters: dict[str, Cluster],
    layouts: dict[str, str],
) -> list[MachineSpec]:
    if not isinstance(node, SequenceNode):
        doc.fail(node, "machines", "a list of machines", _text(node))
    machines: list[MachineSpec] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(node.value):
        where = f"machines[{i}]"
        keys = doc.mapping(item, where, ("name", "cluster", "type"), (*POWER_KEYS, *OWN_KEYS))
        name = doc.name(keys["name"], f"{where}.name")
        if name in seen:
            doc.fail(
                keys["name"], f"{where}.name", f"a unique name (as machines[{seen[name]}])", name
            )
        seen[name] = i
        cluster = doc.name(keys["cluster"], f"{where}.cluster")
        if cluster not in clusters:
            doc.fail(
                keys["cluster"], f"{where}.cluster", "a cluster listed under clusters", cluster
            )
        mtype = doc.name(keys["type"], f"{where}.type")
        if mtype not in types:
            doc.fail(keys["type"], f"{where}.type", "a type listed under types", mtype)
        power = list(types[mtype])
        for j, key in enumerate(POWER_KEYS):
            if key in keys:
                power[j] = doc.number(keys[key], f"{where}.{key}", integer=key == "cores")
        cores, active, idle, sleep, memory = power
        if "memory" in keys:
            memory = doc.memory(keys["memory"], f"{where}.memory")
        slots = doc.layout(keys["slots"], f"{where}.slots") if "slots" in keys else layouts[cluster]
        spec = MachineSpec(name, cluster, mtype, int(cores), active, idle, sleep, memory, slots)
        machines.append(spec)
    return machines


def _hours(doc: _Doc, node: Node, field: str) -> OpeningHours:
    """A single range/closed for the whole week, or a mapping of day keys to ranges."""
    spans: dict[str, Node]
    if isinstance(node, ScalarNode):
        spans = {"default": node}
    else:
        spans = {k: v for k, (_, v) in doc.items(node, field).items()}
    for key, value in spans.items():
        if not isinstance(value, ScalarNode):
            doc.fail(value, _join(field, key), RANGE_EXPECTED, _text(value))
    try:
        return parse_hours({key: str(value.value) for key, value in spans.items()})
    except HoursError as exc:
        if exc.key in spans and isinstance(node, MappingNode):
            doc.fail(spans[exc.key], f"{field}.{exc.key}", exc.expected, exc.got)
        doc.fail(node, field, exc.expected, exc.got)


def write_inventory(inv: Inventory, path: Path_) -> None:
    """Write ``inv``; each type takes its machines' most common power, others get overrides."""
    names = [*inv.clusters, *(n for m in inv.machines for n in (m.name, m.cluster, m.mtype))]
    bad = [n for n in names if not _printable(n)]
    if bad:
        raise ValueError(f"inventory names must be non-empty printable text, got {bad[0]!r}")
    types: dict[str, tuple[float, ...]] = {}
    for mtype in dict.fromkeys(m.mtype for m in inv.machines):
        counts = Counter(_power(m) for m in inv.machines if m.mtype == mtype)
        types[mtype] = counts.most_common(1)[0][0]
    machines = []
    for m in inv.machines:
        entry: dict[str, Any] = {"name": m.name, "cluster": m.cluster, "type": m.mtype}
        for key, own, base in zip(POWER_KEYS, _power(m), types[m.mtype], strict=True):
            if own != base:
                entry[key] = _plain(own)
        if math.isfinite(m.memory_mb):
            entry["memory"] = _plain(m.memory_mb)
        if m.slots != SINGLE:
            entry["slots"] = m.slots
        machines.append(entry)
    data = {
        "types": {t: dict(zip(POWER_KEYS, map(_plain, p), strict=True)) for t, p in types.items()},
        "clusters": {c.name: {"hours": format_hours(c.hours)} for c in inv.clusters.values()},
        "machines": machines,
    }
    text = yaml.safe_dump(
        data, default_flow_style=None, sort_keys=False, width=2**30, allow_unicode=True
    )
    write_text(path, _HEADER + text)


def _power(m: MachineSpec) -> tuple[float, ...]:
    values = (float(m.cores), m.active_watts, m.idle_watts, m.sleep_watts)
    if not all(math.isfinite(v) and v >= 0 for v in values) or m.cores < 1:
        raise ValueError(f"machine {m.name!r}: cores and watts must be finite, cores >= 1")
    return values


def _plain(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def _compose(path: Path_, text: str) -> Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise TraceError(path, line, None, "valid YAML", exc.problem or str(exc)) from None
    except yaml.YAMLError as exc:
        raise TraceError(path, None, None, "valid YAML", str(exc)) from None


def _printable(name: str) -> bool:
    """Names are identifiers; control and line-break characters (NEL, U+2028) break YAML."""
    return bool(name) and name.isprintable()


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def _text(node: Node) -> str:
    if isinstance(node, ScalarNode):
        return str(node.value)
    return "a list" if isinstance(node, SequenceNode) else "a mapping"
