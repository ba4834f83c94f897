"""SWF logs: header and columns, swf_jobs rules, located errors, fuzzing, the three real logs."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.traces import SwfLog, TraceError, read_swf, swf_jobs
from simulator.traces.swf import SWF_FIELDS

SMALL = """\
; Version: 2.2
; Computer: Test cluster
; Information: http://example.org/a
;              http://example.org/b
; UnixStartTime: 1000000
; MaxNodes: 4
; MaxProcs: 8
; Partition: 1 fast
; Partition: 2 slow
;  # job submit wait run ...
    1   0   5   100  2 90.5 -1  2  200 -1  1  3  1 -1 -1  1 -1 -1
\t2\t50\t0\t\t30   1  -1 -1  1   60 -1  5  4  1 -1 -1  2 -1 -1

    3   20  1   7    1  -1  -1  1   60 -1  1  3  1 -1 -1  2  1 10
"""


def _write(tmp_path: Path, text: str, name: str = "log.swf") -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


@pytest.mark.parametrize("name", ["log.swf", "log.swf.gz"])
def test_small_log_columns_and_header(tmp_path: Path, name: str) -> None:
    log = read_swf(_write(tmp_path, SMALL, name))
    assert len(log) == 3 and log.line.tolist() == [11, 12, 14]
    assert log.comments == ["# job submit wait run ..."]
    assert log.job.tolist() == [1, 2, 3] and log.job.dtype == np.int64
    assert log.cpu_avg.tolist() == [90.5, -1.0, -1.0] and log.cpu_avg.dtype == np.float64
    assert log.status.tolist() == [1, 5, 1] and log.think.tolist() == [-1, -1, 10]
    assert list(log.columns()) == list(SWF_FIELDS)
    assert (log.unix_start_time, log.max_nodes, log.max_procs) == (1000000, 4, 8)
    assert log.header["Computer"] == "Test cluster"
    assert log.header["Information"] == "http://example.org/a\nhttp://example.org/b"
    assert log.header["Partition"] == "1 fast\n2 slow"


def test_swf_jobs_offsets_sorts_and_names(tmp_path: Path) -> None:
    log = read_swf(_write(tmp_path, SMALL))
    jobs, dropped = swf_jobs(log)
    assert dropped == 0
    assert jobs.job_id == ["1", "3", "2"] and jobs.user == ["u3", "u3", "u4"]
    assert jobs.submit.tolist() == [1000000.0, 1000020.0, 1000050.0]
    assert jobs.runtime.tolist() == [100.0, 7.0, 30.0]
    assert np.isposinf(jobs.remove).all()
    jobs, _ = swf_jobs(log, start=0.0, select=log.procs_alloc == 1)
    assert jobs.job_id == ["3", "2"] and jobs.submit.tolist() == [20.0, 50.0]


def test_requested_processors_and_memory_become_the_jobs_requests(tmp_path: Path) -> None:
    rows = [
        "1 0 5 100 4 -1 -1 -1 200 262144 1 3 1 -1 -1 1 -1 -1",  # asked nothing: allocated 4
        "2 1 5 100 1 -1 -1 2 200 -1 1 3 1 -1 -1 1 -1 -1",  # asked 2, memory unknown
        "3 2 5 100 -1 -1 -1 -1 200 -1 1 3 1 -1 -1 1 -1 -1",  # nothing known at all
    ]
    jobs, _ = swf_jobs(read_swf(_write(tmp_path, "\n".join(rows) + "\n")))
    assert jobs.cpus.tolist() == [4, 2, 1]
    assert jobs.memory_mb.tolist() == [1024.0, 128.0, 128.0]  # 256 MB per processor x 4


def test_unknown_run_time_raises_unless_skipped(tmp_path: Path) -> None:
    log = read_swf(_write(tmp_path, SMALL.replace("  7    1", " -1    1")))
    with pytest.raises(TraceError) as info:
        swf_jobs(log)
    assert (info.value.line, info.value.field, info.value.got) == (14, "run", "-1")
    assert "skip_unknown_runtime" in info.value.expected
    jobs, dropped = swf_jobs(log, skip_unknown_runtime=True)
    assert dropped == 1 and jobs.job_id == ["1", "2"]


def test_duplicate_job_numbers_raise(tmp_path: Path) -> None:
    log = read_swf(_write(tmp_path, SMALL.replace("    3   20", "    1   20")))
    with pytest.raises(TraceError) as info:
        swf_jobs(log)
    assert (info.value.line, info.value.field) == (14, "job")


ROW = "1 0 5 100 2 90.5 -1 2 200 -1 1 3 1 -1 -1 1 -1 -1"


def _row(**values: str) -> str:
    tokens = ROW.split()
    for name, value in values.items():
        tokens[SWF_FIELDS.index(name)] = value
    return " ".join(tokens)


BAD_LOGS = [
    pytest.param(f"; x\n{ROW}\n{ROW.rsplit(' ', 1)[0]}\n", 3, "think", id="17-fields"),
    pytest.param(f"{ROW} 7\n", 1, None, id="19-fields"),
    pytest.param(f"{ROW}\n{_row(run='abc')}\n", 2, "run", id="text"),
    pytest.param(f"{_row(job='1.5')}\n", 1, "job", id="fractional-id"),
    pytest.param(f"{_row(user='1e30')}\n", 1, "user", id="huge-id"),
    pytest.param(f"{_row(wait='nan')}\n", 1, "wait", id="nan"),
    pytest.param(f"{_row(submit='inf')}\n", 1, "submit", id="inf"),
    pytest.param(f"{ROW} ; trailing comment\n", 1, None, id="inline-comment"),
    pytest.param(f"; UnixStartTime: soon\n{ROW}\n", 1, "UnixStartTime", id="header-int"),
    pytest.param(f"; MaxProcs: 1.5\n{ROW}\n", 1, "MaxProcs", id="header-fraction"),
]


@pytest.mark.parametrize(("text", "line", "field"), BAD_LOGS)
def test_bad_logs_are_located(tmp_path: Path, text: str, line: int, field: str | None) -> None:
    path = _write(tmp_path, text, "bad.swf.gz")
    with pytest.raises(TraceError) as info:
        read_swf(path)
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


def test_negative_submit_is_refused_by_swf_jobs(tmp_path: Path) -> None:
    log = read_swf(_write(tmp_path, _row(submit="-1") + "\n"))
    with pytest.raises(TraceError) as info:
        swf_jobs(log)
    assert (info.value.line, info.value.field) == (1, "submit")


def test_comment_only_log_is_empty(tmp_path: Path) -> None:
    log = read_swf(_write(tmp_path, "; Version: 2.2\n\n"))
    assert len(log) == 0 and log.run.shape == (0,)
    jobs, dropped = swf_jobs(log)
    assert len(jobs) == 0 and dropped == 0


_token = st.one_of(
    st.sampled_from(["-1", "0", "7", "1.5", "nan", "1e400", ";", "x", "\t", "", "1_0"]),
    st.text(max_size=4),
)
_swf_line = st.one_of(
    st.lists(_token, min_size=16, max_size=20).map(" ".join),
    st.lists(_token, max_size=5).map("\t".join),
    st.text(max_size=40),
    st.just(ROW),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_swf_line, max_size=6), st.none() | st.binary(max_size=64))
def test_fuzzed_swf_parses_or_raises_trace_error(lines: list[str], raw: bytes | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.swf"
        path.write_bytes(raw if raw is not None else "\n".join(lines).encode())
        try:
            log = read_swf(path)
        except TraceError as err:
            assert err.path == str(path) and err.expected
            return
        assert all(len(c) == len(log) for c in log.columns().values())
        try:
            swf_jobs(log)
        except TraceError as err:
            assert err.field in ("run", "submit", "job")


# ---- the real logs (../shared/data) ------------------------------------------------------------

REAL_LOGS = {
    # name: (path, data lines, header MaxJobs, jobs with run -1)
    "nasa": ("NASA-iPSC-1993-3.1-cln/NASA-iPSC-1993-3.1-cln.swf.gz", 18239, 18239, 0),
    # The HPC2N subset has 3,170 data lines although its SOURCE.txt says 3,171; the header's
    # MaxJobs is that of the full PWA log the subset was cut from.
    "hpc2n": ("HPC2N-subset_alea/hpc2n-subset.swf.gz", 3170, 527371, 25),
    "lcg": ("LCG-2005-1/LCG-2005-1.swf.gz", 188041, 188041, 0),
}


@pytest.fixture(scope="module")
def real_logs(shared_data: Path) -> dict[str, SwfLog]:
    return {name: read_swf(shared_data / "b_workloads" / p) for name, (p, *_) in REAL_LOGS.items()}


@pytest.mark.realdata
@pytest.mark.parametrize("name", list(REAL_LOGS))
def test_real_log_counts(real_logs: dict[str, SwfLog], name: str) -> None:
    _, count, max_jobs, unknown_run = REAL_LOGS[name]
    log = real_logs[name]
    assert len(log) == count
    assert log.int_header["MaxJobs"] == max_jobs
    assert int((log.run < 0).sum()) == unknown_run
    assert (np.diff(log.submit) >= 0).all(), "PWA logs are in submit order"
    jobs, dropped = swf_jobs(log, skip_unknown_runtime=True)
    assert (len(jobs), dropped) == (count - unknown_run, unknown_run)
    assert jobs.submit[0] == log.unix_start_time + log.submit[0]


@pytest.mark.realdata
def test_real_log_details(real_logs: dict[str, SwfLog]) -> None:
    nasa, hpc2n, lcg = real_logs["nasa"], real_logs["hpc2n"], real_logs["lcg"]
    assert (nasa.unix_start_time, nasa.max_nodes, nasa.max_procs) == (749458803, 128, 128)
    assert nasa.job[:3].tolist() == [1, 2, 3] and nasa.run[:2].tolist() == [1451.0, 3726.0]
    assert "cleaned" in nasa.header["Note"].lower()
    assert hpc2n.job[-1] == 7183 and hpc2n.cpu_avg[-1] == 129.02
    with pytest.raises(TraceError) as info:
        swf_jobs(hpc2n)
    assert (info.value.field, info.value.line) == ("run", int(hpc2n.line[hpc2n.run < 0][0]))
    assert lcg.max_procs == 24515 and lcg.header["Partition"].count("\n") == 169
    assert lcg.comments and lcg.comments[0].startswith("#       sub")
    assert lcg.partition.max() == 170
