"""FTA event traces: columns, down intervals as unavailability, located errors, the LANL trace."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.trace_model import OpeningHours
from simulator.traces import FtaTrace, TraceError, fta_unavailability, read_fta

HEADER = (
    "event_id  component_id node_id  platform_id   node_name     event_type   "
    "event_start_time     event_stop_time  event_end_reason\n"
)
SMALL = HEADER + (
    # padded like the LANL file: spaces and empty tab-separated cells between the columns
    "    0\t    0\t  655\t    3\t    10.000\t      0\t   \t\t100\t   \t\t200\t       \t8000\n"
    "    1\t    0\t  655\t    3\t    10.000\t      1\t   \t\t200\t   \t\t900\t       \t4022\n"
    "    0\t 0\t 12\t 3\t 9.970\t 0\t 50\t 50\t NULL\n"
    "\n"
    "    1\t 0\t 12\t 3\t 9.970\t 0\t 150\t 400\t 8000\n"
)


def _write(tmp_path: Path, text: str, name: str = "event_trace.tab") -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


@pytest.mark.parametrize("name", ["event_trace.tab", "event_trace.tab.gz"])
def test_small_trace_columns(tmp_path: Path, name: str) -> None:
    fta = read_fta(_write(tmp_path, SMALL, name))
    assert len(fta) == 4 and fta.line.tolist() == [2, 3, 4, 6]
    assert fta.node_id.tolist() == [655, 655, 12, 12]
    assert fta.node_name == ["10.000", "10.000", "9.970", "9.970"]
    assert fta.event_type.tolist() == [0, 1, 0, 0]
    assert fta.start.tolist() == [100.0, 200.0, 50.0, 150.0]
    assert fta.stop.tolist() == [200.0, 900.0, 50.0, 400.0]
    assert fta.end_reason.tolist() == [8000, 4022, -1, 8000]


def test_unavailability_from_down_intervals(tmp_path: Path) -> None:
    fta = read_fta(_write(tmp_path, SMALL))
    inv, down = fta_unavailability(fta)
    assert [m.name for m in inv.machines] == ["node-12", "node-655"]
    assert list(inv.clusters) == ["fta"] and inv.clusters["fta"].hours == OpeningHours.always()
    m = inv.machines[0]
    assert (m.cluster, m.mtype, m.cores, m.active_watts, m.idle_watts, m.sleep_watts) == (
        "fta", "normal", 2, 57.0, 40.0, 2.0,
    )  # fmt: skip
    assert down.machine.tolist() == [0, 1, 0] and down.machine.dtype == np.int32
    assert down.start.tolist() == [50.0, 100.0, 150.0]
    assert down.end.tolist() == [50.0, 200.0, 400.0]
    inv, down = fta_unavailability(fta, node_ids=[655, 12, 655], limit=1)
    assert [m.name for m in inv.machines] == ["node-655"]
    assert down.start.tolist() == [100.0]
    with pytest.raises(ValueError, match="7"):
        fta_unavailability(fta, node_ids=[7])


def _row(tokens: dict[int, str]) -> str:
    base = ["0", "0", "12", "3", "9.970", "0", "10", "20", "8000"]
    for i, value in tokens.items():
        base[i] = value
    return "\t".join(base) + "\n"


BAD_TRACES = [
    pytest.param("event_id node_id\n", 1, None, id="header"),
    pytest.param("", None, None, id="empty"),
    pytest.param(HEADER + _row({}) + _row({5: "2"}), 3, "event_type", id="event-type"),
    pytest.param(HEADER + _row({6: "30"}), 2, "event_stop_time", id="stop-before-start"),
    pytest.param(HEADER + _row({2: "x12"}), 2, "node_id", id="node-id"),
    pytest.param(HEADER + _row({0: "1.5"}), 2, "event_id", id="fractional-id"),
    pytest.param(HEADER + _row({7: "nan"}), 2, "event_stop_time", id="nan"),
    pytest.param(HEADER + _row({8: "later"}), 2, "event_end_reason", id="reason"),
    pytest.param(HEADER + "0 0 12 3 9.970 0 10 20\n", 2, "event_end_reason", id="8-columns"),
    pytest.param(HEADER + "0 0 12 3 9.970 0 10 20 1 1\n", 2, None, id="10-columns"),
]


@pytest.mark.parametrize(("text", "line", "field"), BAD_TRACES)
def test_bad_traces_are_located(
    tmp_path: Path, text: str, line: int | None, field: str | None
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(TraceError) as info:
        read_fta(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), st.just(_row({}))), max_size=5))
def test_fuzzed_fta_parses_or_raises_trace_error(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.tab"
        path.write_text(HEADER + "\n".join(lines), encoding="utf-8", errors="surrogatepass")
        try:
            fta = read_fta(path)
        except TraceError as err:
            assert err.path == str(path)
            return
        _, down = fta_unavailability(fta)
        assert len(down.start) == int((fta.event_type == 0).sum())


@pytest.fixture(scope="module")
def lanl(shared_data: Path) -> FtaTrace:
    return read_fta(shared_data / "a_availability/FTA-lanl05_event_trace/event_trace.tab.gz")


@pytest.mark.realdata
def test_lanl_trace_counts(lanl: FtaTrace) -> None:
    assert len(lanl) == 43325
    # README and SOURCE.txt say 3,249 nodes: that counts node_name, which LANL's float-formatted
    # "system.node" names make ambiguous (node ids 1308 and 2011 are both "18.830", with
    # overlapping intervals). node_id distinguishes 3,577 nodes.
    assert len(set(lanl.node_name)) == 3249
    assert len(np.unique(lanl.node_id)) == 3577
    assert np.bincount(lanl.event_type).tolist() == [23451, 19874]
    assert set(lanl.end_reason[lanl.event_type == 0].tolist()) == {8000}
    assert lanl.stop.max() == 1126273620.0  # 2005-09-09
    inv, down = fta_unavailability(lanl)
    assert len(inv.machines) == 3577 and len(down.start) == 23451
    assert (np.diff(down.start) >= 0).all() and (down.end >= down.start).all()
    small_inv, small = fta_unavailability(lanl, limit=10)
    assert len(small_inv.machines) == 10 and set(small.machine.tolist()) <= set(range(10))
