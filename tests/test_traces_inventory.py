"""Inventory YAML: the documented example, write->read round trips, located errors."""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.trace_model import DAY, Cluster, Inventory, MachineSpec, OpeningHours
from simulator.traces import TraceError, read_inventory, write_inventory
from simulator.traces._hours import format_hours, parse_hours

EXAMPLE = """\
types:                      # power per state in watts, cores
  normal:   {cores: 2, active: 57, idle: 40, sleep: 2}
  high-end: {cores: 4, active: 114, idle: 67, sleep: 3}
  legacy:   {cores: 1, active: 140, idle: 60, sleep: 4}
clusters:
  library: {hours: "00:00-24:00"}                       # every day
  teaching-1: {hours: {mon-fri: "09:00-17:00", sat: "10:00-14:00", sun: closed}}
machines:
  - {name: lib-0001, cluster: library, type: normal}
  - {name: t1-0001, cluster: teaching-1, type: legacy, active: 150, idle: 65}
  - {name: t1-0002, cluster: teaching-1, type: high-end}
"""


def _write(tmp_path: Path, text: str, name: str = "inv.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_example_reads_with_overrides_and_hours(tmp_path: Path) -> None:
    inv = read_inventory(_write(tmp_path, EXAMPLE))
    lib, t1, t2 = inv.machines
    assert lib == MachineSpec("lib-0001", "library", "normal", 2, 57.0, 40.0, 2.0)
    assert t1 == MachineSpec("t1-0001", "teaching-1", "legacy", 1, 150.0, 65.0, 4.0)
    assert t2.cores == 4 and t2.active_watts == 114.0
    assert inv.clusters["library"].hours == OpeningHours.always()
    teaching = inv.clusters["teaching-1"].hours.days
    assert teaching[:5] == ((9 * 3600.0, 17 * 3600.0),) * 5
    assert teaching[5] == (10 * 3600.0, 14 * 3600.0)
    assert teaching[6] is None


def test_slots_and_memory_come_from_the_machine_its_cluster_or_its_type(tmp_path: Path) -> None:
    text = (
        EXAMPLE.replace("cores: 4, active", "cores: 4, memory: 8192, active")
        .replace(
            'library: {hours: "00:00-24:00"}',
            'library: {hours: "00:00-24:00", slots: partitionable}',
        )
        .replace("type: high-end}", "type: high-end, slots: partitionable, memory: 16000}")
    )
    lib, t1, t2 = read_inventory(_write(tmp_path, text)).machines
    assert (lib.slots, lib.memory_mb) == ("partitionable", float("inf"))  # its cluster's slots
    assert (t1.slots, t1.memory_mb) == ("single", float("inf"))  # the default: the papers' model
    assert (t2.slots, t2.memory_mb) == ("partitionable", 16000.0)  # its own, over its type's
    inv = read_inventory(_write(tmp_path, text))
    write_inventory(inv, tmp_path / "out.yaml")
    assert read_inventory(tmp_path / "out.yaml") == inv


def test_example_round_trips_and_gz(tmp_path: Path) -> None:
    inv = read_inventory(_write(tmp_path, EXAMPLE))
    for name in ("out.yaml", "out.yaml.gz"):
        write_inventory(inv, tmp_path / name)
        assert read_inventory(tmp_path / name) == inv
    assert "t1-0001" in (tmp_path / "out.yaml").read_text()


def test_default_key_and_seconds(tmp_path: Path) -> None:
    text = EXAMPLE.replace(
        '{mon-fri: "09:00-17:00", sat: "10:00-14:00", sun: closed}',
        '{default: closed, wed: "08:30:15-24:00"}',
    )
    days = read_inventory(_write(tmp_path, text)).clusters["teaching-1"].hours.days
    assert days[2] == (8 * 3600 + 30 * 60 + 15.0, DAY)
    assert [d for i, d in enumerate(days) if i != 2] == [None] * 6


def _bad(old: str, new: str) -> str:
    assert old in EXAMPLE
    return EXAMPLE.replace(old, new, 1)


BAD_INVENTORIES = [
    pytest.param(_bad("type: normal}", "type: nomal}"), 9, "machines[0].type", id="unknown-type"),
    pytest.param(
        _bad("cluster: library,", "cluster: libary,"),
        9,
        "machines[0].cluster",
        id="unknown-cluster",
    ),
    pytest.param(_bad("t1-0002", "t1-0001"), 11, "machines[2].name", id="duplicate-machine"),
    pytest.param(_bad("idle: 65}", "idle: 65, colour: red}"), 10, "machines[1].colour", id="key"),
    pytest.param(_bad("sleep: 3}", "sleep: -3}"), 3, "types.high-end.sleep", id="negative-watts"),
    pytest.param(_bad("cores: 4,", "cores: 0,"), 3, "types.high-end.cores", id="zero-cores"),
    pytest.param(
        _bad("cores: 4,", "cores: 4, memory: 0,"), 3, "types.high-end.memory", id="zero-memory"
    ),
    pytest.param(
        _bad("type: high-end}", "type: high-end, slots: dynamic}"),
        11,
        "machines[2].slots",
        id="slots",
    ),
    pytest.param(
        _bad('"00:00-24:00"}', '"00:00-24:00", slots: 4}'),
        6,
        "clusters.library.slots",
        id="c-slots",
    ),
    pytest.param(_bad("cores: 4,", "cores: two,"), 3, "types.high-end.cores", id="text-cores"),
    pytest.param(_bad(" sleep: 2}", " sleep: .nan}"), 2, "types.normal.sleep", id="nan"),
    pytest.param(_bad(", sleep: 2}", "}"), 2, "types.normal.sleep", id="missing-key"),
    pytest.param(
        _bad('"09:00-17:00"', '"17:00-09:00"'), 7, "clusters.teaching-1.hours.mon-fri", id="order"
    ),
    pytest.param(
        _bad('"09:00-17:00"', '"09:60-17:00"'), 7, "clusters.teaching-1.hours.mon-fri", id="minute"
    ),
    pytest.param(_bad('"00:00-24:00"', '"00:00-24:01"'), 6, "clusters.library.hours", id="24:01"),
    pytest.param(_bad("sun: closed", "sun: shut"), 7, "clusters.teaching-1.hours.sun", id="shut"),
    pytest.param(
        _bad("sun: closed", "sunday: closed"), 7, "clusters.teaching-1.hours.sunday", id="day-key"
    ),
    pytest.param(
        _bad("sun: closed", "fri: closed"), 7, "clusters.teaching-1.hours.fri", id="day-twice"
    ),
    pytest.param(_bad(", sun: closed", ""), 7, "clusters.teaching-1.hours", id="day-missing"),
    pytest.param(_bad("  normal:", "  legacy:"), 4, "types.legacy", id="duplicate-key"),
    pytest.param(
        EXAMPLE.split("machines:")[0] + "machines: 3\n", 8, "machines", id="machines-not-list"
    ),
    pytest.param(_bad("clusters:\n", "cluster:\n"), 5, "cluster", id="top-level-key"),
    pytest.param(_bad("{name: lib-0001,", "{name: [lib-0001],"), 9, "machines[0].name", id="name"),
    pytest.param(_bad("types:  ", "types: {  "), 3, None, id="yaml-syntax"),
]


@pytest.mark.parametrize(("text", "line", "field"), BAD_INVENTORIES)
def test_bad_inventory_is_located(tmp_path: Path, text: str, line: int, field: str | None) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(TraceError) as info:
        read_inventory(path)
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), line, field), str(err)
    assert str(err).startswith(f"{path}:{line}: ")
    assert err.expected


def test_unprintable_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TraceError) as info:
        read_inventory(_write(tmp_path, _bad("name: lib-0001", 'name: "lib\\x850001"')))
    assert (info.value.line, info.value.field) == (9, "machines[0].name")
    inv = read_inventory(_write(tmp_path, EXAMPLE))
    inv.machines[0] = MachineSpec("a\u2028b", "library", "normal", 2, 57.0, 40.0, 2.0)
    with pytest.raises(ValueError, match="printable"):
        write_inventory(inv, tmp_path / "out.yaml")


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="expected a mapping"):
        read_inventory(_write(tmp_path, "# nothing\n"))


def test_trace_error_message_and_pickle() -> None:
    err = TraceError("jobs.csv", 17, "runtime", "a non-negative number of seconds", "abc")
    assert (
        str(err)
        == "jobs.csv:17: field 'runtime': expected a non-negative number of seconds, got 'abc'"
    )
    assert str(TraceError("x.swf", None, None, "a gzip file")) == "x.swf: expected a gzip file"
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, TraceError) and str(again) == str(err) and again.line == 17
    assert isinstance(again, ValueError)


def test_format_hours_groups_runs() -> None:
    nine_five = (9 * 3600.0, 17 * 3600.0)
    hours = OpeningHours(days=(nine_five,) * 5 + ((10 * 3600.0, 14 * 3600.0), None))
    text = format_hours(hours)
    assert text == {"mon-fri": "09:00-17:00", "sat": "10:00-14:00", "sun": "closed"}
    assert isinstance(text, dict) and parse_hours(text) == hours
    assert format_hours(OpeningHours.always()) == "00:00-24:00"


# ---- hypothesis round trip -------------------------------------------------------------------

_names = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12).filter(
    str.isprintable
)
_second = st.integers(0, 86400)
_span = st.one_of(
    st.none(),
    st.tuples(_second, _second)
    .filter(lambda ab: ab[0] < ab[1])
    .map(lambda ab: (float(ab[0]), float(ab[1]))),
)
_hours = st.lists(_span, min_size=7, max_size=7).map(lambda d: OpeningHours(days=tuple(d)))
_watts = st.one_of(st.integers(0, 500).map(float), st.floats(0, 1e4, allow_nan=False))


@st.composite
def inventories(draw: st.DrawFn) -> Inventory:
    cluster_names = draw(st.lists(_names, min_size=1, max_size=3, unique=True))
    clusters = {c: Cluster(c, draw(_hours)) for c in cluster_names}
    type_names = draw(st.lists(_names, min_size=1, max_size=3, unique=True))
    machine_names = draw(st.lists(_names, max_size=8, unique=True))
    machines = [
        MachineSpec(
            name,
            draw(st.sampled_from(cluster_names)),
            draw(st.sampled_from(type_names)),
            draw(st.integers(1, 64)),
            draw(_watts),
            draw(_watts),
            draw(_watts),
        )
        for name in machine_names
    ]
    return Inventory(clusters=clusters, machines=machines)


@settings(max_examples=60, deadline=None)
@given(inventories(), st.booleans())
def test_inventory_round_trip(inv: Inventory, gz: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("inv.yaml.gz" if gz else "inv.yaml")
        write_inventory(inv, path)
        assert read_inventory(path) == inv


_yaml_line = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["  - &a [*a]", "<<: {x: 1}", "  x: !!binary aGk=", "? [a]\n: b", "  - 1: 2"]),
)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, EXAMPLE.count("\n")), _yaml_line)
def test_fuzzed_inventory_parses_or_raises_trace_error(at: int, line: str) -> None:
    lines = EXAMPLE.splitlines()
    lines[at:at] = [line]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "inv.yaml"
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
        try:
            read_inventory(path)
        except TraceError as err:
            assert err.path == str(path) and err.expected
