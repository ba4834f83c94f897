"""Owner-session and job CSVs: round trips, ISO/gz input, located errors, fuzzed input."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.trace_model import Cluster, Inventory, Jobs, MachineSpec, OpeningHours, OwnerSessions
from simulator.traces import (
    TraceError,
    read_jobs,
    read_owner_sessions,
    write_jobs,
    write_owner_sessions,
)

MACHINES = ["lib-0001", "lib-0002", 'odd, "quoted" name']
INVENTORY = Inventory(
    clusters={"library": Cluster("library", OpeningHours.always())},
    machines=[MachineSpec(n, "library", "normal", 2, 57.0, 40.0, 2.0) for n in MACHINES],
)


def _write(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_sessions_iso_times_sorted_and_gz(tmp_path: Path) -> None:
    text = (
        "login,machine,logout\n"
        "2010-01-04T09:13:00Z,lib-0002,2010-01-04T10:00:00+00:00\n"
        "\n"
        "1262592000,lib-0001,1262592060.5\n"
    )
    for name in ("s.csv", "s.csv.gz"):
        sessions = read_owner_sessions(_write(tmp_path, text, name), INVENTORY)
        assert sessions.login.tolist() == [1262592000.0, 1262596380.0]
        assert sessions.logout.tolist() == [1262592060.5, 1262599200.0]
        assert sessions.machine.tolist() == [0, 1]
        assert sessions.machine.dtype == np.int32


def test_jobs_columns_any_order_and_never_finishing(tmp_path: Path) -> None:
    text = "job_id,user,submit,runtime,remove\nb,bob,200,,900\na,ann,100,3600,\nc,cy,150,60,170\n"
    jobs = read_jobs(_write(tmp_path, text, "j.csv"))
    assert jobs.job_id == ["a", "c", "b"] and jobs.user == ["ann", "cy", "bob"]
    assert jobs.runtime.tolist() == [3600.0, 60.0, np.inf]
    assert jobs.remove.tolist() == [np.inf, 170.0, 900.0]
    assert jobs.never_finishes().tolist() == [False, False, True]
    assert not jobs.replicable.any()


def test_writer_output_is_readable_text(tmp_path: Path) -> None:
    jobs = Jobs(["1.0"], ["u"], np.array([5.0]), np.array([np.inf]), np.array([7.25]))
    write_jobs(jobs, tmp_path / "j.csv")
    lines = (tmp_path / "j.csv").read_text().splitlines()
    assert lines == ["submit,job_id,user,runtime,remove,replicable", "5,1.0,u,,7.25,0"]


def test_writers_refuse_what_the_reader_would_reject(tmp_path: Path) -> None:
    stuck = Jobs(["1"], ["u"], np.array([5.0]), np.array([np.inf]), np.array([np.inf]))
    with pytest.raises(ValueError, match="never finishes"):
        write_jobs(stuck, tmp_path / "j.csv")
    bad = OwnerSessions(np.array([1.0]), np.array([7], dtype=np.int32), np.array([2.0]))
    with pytest.raises(ValueError, match="inventory"):
        write_owner_sessions(bad, INVENTORY, tmp_path / "s.csv")


S_HEAD = "login,machine,logout\n"
J_HEAD = "submit,job_id,user,runtime,remove,replicable\n"
BAD_SESSIONS = [
    pytest.param(S_HEAD + "1,lib-0001,2\nabc,lib-0001,5\n", 3, "login", id="login-text"),
    pytest.param(S_HEAD + "1,lib-0001,nan\n", 2, "logout", id="logout-nan"),
    pytest.param(S_HEAD + "1,lib-0001,inf\n", 2, "logout", id="logout-inf"),
    pytest.param(S_HEAD + "2010-01-04T09:13:00,lib-0001,2\n", 2, "login", id="naive-iso"),
    pytest.param(S_HEAD + "10,lib-0001,5\n", 2, "logout", id="logout-before-login"),
    pytest.param(S_HEAD + "1,lib-0001,2\n1,lab-9,2\n", 3, "machine", id="unknown-machine"),
    pytest.param(S_HEAD + "1,lib-0001,2\n1,lib-0001\n", 3, "logout", id="missing-field"),
    pytest.param(S_HEAD + "1,lib-0001,2,3\n", 2, None, id="extra-field"),
    pytest.param(S_HEAD + '1,"lib-0001",2\n3,lib-0001\n', 3, "logout", id="quoted-missing"),
    pytest.param(S_HEAD + '1,"lib"-0001,2\n', 2, None, id="bad-quotes"),
    pytest.param("login,machine\n1,lib-0001\n", 1, None, id="missing-column"),
    pytest.param("login,machine,logout,x\n", 1, None, id="unknown-column"),
    pytest.param("1,lib-0001,2\n", 1, None, id="no-header"),
    pytest.param("", 1, None, id="empty"),
]
J_REQ = "submit,job_id,user,runtime,remove,cpus,memory_mb\n"
BAD_JOBS = [
    pytest.param(J_HEAD + "1,a,u,abc,,\n", 2, "runtime", id="runtime-text"),
    pytest.param(J_HEAD + "1,a,u,-5,,\n", 2, "runtime", id="runtime-negative"),
    pytest.param(J_HEAD + "1,a,u,inf,,\n", 2, "runtime", id="runtime-inf-literal"),
    pytest.param(J_HEAD + "1,a,u,,,\n", 2, "remove", id="never-finishes-no-remove"),
    pytest.param(J_HEAD + "10,a,u,5,3,\n", 2, "remove", id="remove-before-submit"),
    pytest.param(J_HEAD + "x,a,u,5,,\n", 2, "submit", id="submit-text"),
    pytest.param(J_HEAD + "1709542800000,a,u,5,,\n", 2, "submit", id="submit-milliseconds"),
    pytest.param(J_HEAD + "1,a,u,5,,\n2,b,u,5,,\n3,a,v,5,,\n", 4, "job_id", id="duplicate-id"),
    pytest.param(J_HEAD + "1,a,u,5,,\n2, ,u,5,,\n", 3, "job_id", id="blank-id"),
    pytest.param(J_HEAD + "1,a,,5,,\n", 2, "user", id="empty-user"),
    pytest.param(J_HEAD + "1,a,u,5,,maybe\n", 2, "replicable", id="replicable"),
    pytest.param(J_REQ + "1,a,u,5,,0,128\n", 2, "cpus", id="cpus-zero"),
    pytest.param(J_REQ + "1,a,u,5,,1.5,128\n", 2, "cpus", id="cpus-fraction"),
    pytest.param(J_REQ + "1,a,u,5,,1,128\n2,b,u,5,,two,128\n", 3, "cpus", id="cpus-text"),
    pytest.param(J_REQ + "1,a,u,5,,1,-1\n", 2, "memory_mb", id="memory-negative"),
    pytest.param(J_REQ + "1,a,u,5,,1,0\n", 2, "memory_mb", id="memory-zero"),
    pytest.param(J_REQ + "1,a,u,5,,1,lots\n", 2, "memory_mb", id="memory-text"),
    pytest.param(J_HEAD + "1,a,u,5\n", 2, "remove", id="short-row"),
    pytest.param("submit,job_id,user,runtime,remove,job_id\n", 1, None, id="duplicate-column"),
]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize(("text", "line", "field"), BAD_SESSIONS)
def test_bad_sessions_are_located(
    tmp_path: Path, text: str, line: int, field: str | None, gz: bool
) -> None:
    path = _write(tmp_path, text, "s.csv.gz" if gz else "s.csv")
    with pytest.raises(TraceError) as info:
        read_owner_sessions(path, INVENTORY)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)
    assert str(info.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(("text", "line", "field"), BAD_JOBS)
def test_bad_jobs_are_located(tmp_path: Path, text: str, line: int, field: str | None) -> None:
    path = _write(tmp_path, text, "j.csv")
    with pytest.raises(TraceError) as info:
        read_jobs(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


def test_requests_default_to_one_core_and_128_mb_where_a_cell_or_the_column_is_empty(
    tmp_path: Path,
) -> None:
    jobs = read_jobs(_write(tmp_path, J_REQ + "1,a,u,5,,4,2048\n2,b,u,5,,,\n", "j.csv"))
    assert jobs.cpus.tolist() == [4, 1] and jobs.memory_mb.tolist() == [2048.0, 128.0]
    plain = read_jobs(_write(tmp_path, J_HEAD + "1,a,u,5,,\n", "plain.csv"))
    assert plain.cpus.tolist() == [1] and plain.memory_mb.tolist() == [128.0]
    write_jobs(plain, tmp_path / "back.csv")  # a trace without requests is written without them
    assert (tmp_path / "back.csv").read_text().splitlines()[0] == J_HEAD.strip()


def test_undecodable_and_broken_gzip_are_trace_errors(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_bytes(J_HEAD.encode() + b"1,a\xff,u,5,,\n")
    with pytest.raises(TraceError) as info:
        read_jobs(path)
    assert info.value.line == 2 and "UTF-8" in info.value.expected
    broken = tmp_path / "j.csv.gz"
    broken.write_bytes(gzip.compress(J_HEAD.encode())[:-6])
    with pytest.raises(TraceError, match="gzip"):
        read_jobs(broken)


# ---- hypothesis: round trips -----------------------------------------------------------------

_time = st.one_of(st.integers(0, 2**33).map(float), st.floats(-1e12, 9e10, allow_nan=False))
_duration = st.one_of(st.integers(0, 10**6).map(float), st.floats(0, 1e9, allow_nan=False))
_text = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8).filter(
    lambda s: s.strip() != ""
)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_time, st.integers(0, len(MACHINES) - 1), _duration)), st.booleans())
def test_sessions_round_trip(rows: list[tuple[float, int, float]], gz: bool) -> None:
    login = np.array([r[0] for r in rows], dtype=np.float64)
    machine = np.array([r[1] for r in rows], dtype=np.int32)
    logout = login + np.array([r[2] for r in rows], dtype=np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("s.csv.gz" if gz else "s.csv")
        write_owner_sessions(OwnerSessions(login, machine, logout), INVENTORY, path)
        back = read_owner_sessions(path, INVENTORY)
    order = np.argsort(login, kind="stable")
    assert np.array_equal(back.login, login[order])
    assert np.array_equal(back.machine, machine[order])
    assert np.array_equal(back.logout, logout[order])


@st.composite
def job_lists(draw: st.DrawFn) -> Jobs:
    ids = draw(st.lists(_text, max_size=12, unique=True))
    submit, runtime, remove = [], [], []
    for _ in ids:
        s = draw(_time)
        r = draw(st.one_of(st.just(np.inf), _duration))
        removed = draw(st.booleans()) or not np.isfinite(r)  # a never-finishing job is removed
        rm = s + draw(_duration) if removed else np.inf
        submit.append(s)
        runtime.append(r)
        remove.append(rm)
    users = [draw(_text) for _ in ids]
    replicable = np.array([draw(st.booleans()) for _ in ids], dtype=bool)
    cpus = np.array([draw(st.integers(1, 64)) for _ in ids], dtype=np.int64)
    memory = np.array([draw(st.floats(0.5, 1e6, allow_nan=False)) for _ in ids])
    if draw(st.booleans()):  # most traces say nothing of requests
        cpus, memory = np.ones(len(ids), dtype=np.int64), np.full(len(ids), 128.0)
    return Jobs(
        ids, users, np.array(submit), np.array(runtime), np.array(remove), replicable, cpus, memory
    )


@settings(max_examples=80, deadline=None)
@given(job_lists(), st.booleans())
def test_jobs_round_trip(jobs: Jobs, gz: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("j.csv.gz" if gz else "j.csv")
        write_jobs(jobs, path)
        back = read_jobs(path)
    order = np.argsort(jobs.submit, kind="stable")
    assert back.job_id == [jobs.job_id[i] for i in order]
    assert back.user == [jobs.user[i] for i in order]
    for name in ("submit", "runtime", "remove", "replicable", "cpus", "memory_mb"):
        assert np.array_equal(getattr(back, name), getattr(jobs, name)[order]), name


# ---- hypothesis: fuzzed files either parse or raise TraceError ---------------------------------

_cell = st.one_of(
    st.sampled_from(["", "1", "-1", "1.5", "nan", "inf", "lib-0001", '"', "2010-01-04T09:13:00Z"]),
    st.text(max_size=6),
)
_line = st.one_of(st.lists(_cell, max_size=7).map(",".join), st.text(max_size=30))


def _fuzz(head: str, lines: list[str], raw: bytes | None) -> Path:
    tmp = Path(tempfile.mkdtemp())
    path = tmp / "f.csv"
    body = (head + "\n".join(lines)).encode("utf-8", "surrogatepass")
    path.write_bytes(raw if raw is not None else body)
    return path


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([S_HEAD, J_HEAD, ""]), st.lists(_line, max_size=6), st.none() | st.binary())
def test_fuzzed_csv_parses_or_raises_trace_error(
    head: str, lines: list[str], raw: bytes | None
) -> None:
    path = _fuzz(head, lines, raw)
    for read in (lambda p: read_owner_sessions(p, INVENTORY), read_jobs):
        try:
            read(path)
        except TraceError as err:
            assert err.path == str(path) and err.expected
    path.unlink()
    path.parent.rmdir()
