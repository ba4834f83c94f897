"""Standard Workload Format (Parallel Workloads Archive) logs, the real job streams of the replay.

``read_swf`` keeps all 18 fields as numpy columns plus the ``; Key: value`` header, so analyses
can use any of them; ``swf_jobs`` turns a log into replay ``Jobs`` and refuses to guess a run time
the log does not have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from simulator.trace_model import DEFAULT_CPUS, DEFAULT_MEMORY_MB, Jobs
from simulator.traces._columns import Path_
from simulator.traces._io import read_text, split_lines
from simulator.traces.errors import TraceError

SWF_FIELDS = (
    "job", "submit", "wait", "run", "procs_alloc", "cpu_avg", "mem", "procs_req", "time_req",
    "mem_req", "status", "user", "group", "app", "queue", "partition", "preceding", "think",
)  # fmt: skip
INT_FIELDS = frozenset(
    {"job", "procs_alloc", "procs_req", "status", "user", "group", "app", "queue", "partition"}
    | {"preceding"}
)
INT_HEADER_KEYS = ("UnixStartTime", "MaxJobs", "MaxRecords", "MaxNodes", "MaxProcs", "TimeZone")
_KEY = re.compile(r";\s*([A-Za-z]\w*):(?:\s+(.*?))?\s*")
_LEADING_INT = re.compile(r"([+-]?\d+)(?:$|\s*\()")


@dataclass(slots=True)
class SwfLog:
    """One SWF log: a numpy column per field (-1 = unknown, as in SWF) and the parsed header.

    ``header`` maps each ``; Key: value`` key to its text (repeated keys and continuation lines
    joined by newlines); integer keys such as UnixStartTime are also parsed into ``int_header``;
    ``comments`` holds the other comment lines.
    ``line`` is each job's line in the file, for located errors downstream. Fields that SWF
    defines as integers (ids, counts, status) are int64, times and sizes float64.
    """

    path: str
    header: dict[str, str]
    int_header: dict[str, int]
    comments: list[str]
    line: np.ndarray
    job: np.ndarray
    submit: np.ndarray
    wait: np.ndarray
    run: np.ndarray
    procs_alloc: np.ndarray
    cpu_avg: np.ndarray
    mem: np.ndarray
    procs_req: np.ndarray
    time_req: np.ndarray
    mem_req: np.ndarray
    status: np.ndarray
    user: np.ndarray
    group: np.ndarray
    app: np.ndarray
    queue: np.ndarray
    partition: np.ndarray
    preceding: np.ndarray
    think: np.ndarray

    def __len__(self) -> int:
        return len(self.line)

    def columns(self) -> dict[str, np.ndarray]:
        """The 18 fields by SWF name, in file order."""
        return {name: getattr(self, name) for name in SWF_FIELDS}

    @property
    def unix_start_time(self) -> int | None:
        return self.int_header.get("UnixStartTime")

    @property
    def max_nodes(self) -> int | None:
        return self.int_header.get("MaxNodes")

    @property
    def max_procs(self) -> int | None:
        return self.int_header.get("MaxProcs")


def read_swf(path: Path_) -> SwfLog:
    """Parse an SWF log (whitespace separated, ``;`` comments, optionally gzipped)."""
    header = _Header()
    data: list[str] = []
    numbers: list[int] = []
    for number, text in enumerate(split_lines(read_text(path)), start=1):
        stripped = text.lstrip()
        if stripped.startswith(";"):
            header.add(stripped.rstrip(), number)
        elif stripped:
            data.append(text)
            numbers.append(number)
    lines = np.array(numbers, dtype=np.int64)
    try:
        # numpy's C parser is 3x faster than splitting in Python; any complaint falls back to
        # the slow path, which finds the exact line and field.
        table = np.loadtxt(data, dtype=np.float64, comments=None, ndmin=2) if data else None
    except ValueError:
        table = None
    if table is None or table.shape != (len(data), len(SWF_FIELDS)):
        table = _parse_slowly(path, data, lines)
    columns: dict[str, np.ndarray] = {}
    for j, name in enumerate(SWF_FIELDS):
        col = table[:, j]
        bad = ~np.isfinite(col)
        if name in INT_FIELDS:
            bad |= (col != np.round(col)) | (np.abs(col) >= 2.0**62)
        if bad.any():
            i = int(np.argmax(bad))
            what = "an integer" if name in INT_FIELDS else "a number"
            tokens = data[i].split()
            got = tokens[j] if j < len(tokens) else data[i]
            raise TraceError(path, int(lines[i]), name, f"{what} (-1 if unknown)", got)
        columns[name] = col.astype(np.int64) if name in INT_FIELDS else col.copy()
    int_header = _int_header(path, header.values, header.lines)
    return SwfLog(str(path), header.values, int_header, header.comments, lines, **columns)


def swf_jobs(
    log: SwfLog,
    start: float | None = None,
    *,
    skip_unknown_runtime: bool = False,
    select: np.ndarray | None = None,
) -> tuple[Jobs, int]:
    """Replay jobs of ``log`` and how many were dropped for an unknown (-1) run time.

    job_id is the SWF job number, user ``u<user>``, submit ``start`` (default the header's
    UnixStartTime, else 0) plus the submit field, runtime the run field; ``cpus`` the requested
    processors (else the allocated ones, else 1), ``memory_mb`` the requested memory (SWF gives
    KB per processor; unknown: HTCondor's default 128 MB). Every record becomes one
    job, or those where the boolean array ``select`` is true (e.g. ``log.procs_alloc == 1``). A
    record with run -1 raises a located TraceError unless ``skip_unknown_runtime`` drops it (counted
    in the returned number, never silent). Wait times are ignored: the replay schedules anew.
    """
    base = float(start if start is not None else (log.unix_start_time or 0))
    run, submit = log.run, log.submit
    chosen = np.ones(len(log), dtype=bool) if select is None else np.asarray(select, dtype=bool)
    if chosen.shape != (len(log),):
        raise ValueError(f"select must be a boolean array of {len(log)} records")
    unknown = (run < 0) & chosen
    n_unknown = int(unknown.sum())
    if n_unknown and not skip_unknown_runtime:
        i = int(np.argmax(unknown))
        expected = (
            f"a known run time >= 0 ({n_unknown} jobs have none; "
            "pass skip_unknown_runtime=True to drop them)"
        )
        raise TraceError(log.path, int(log.line[i]), "run", expected, _num(run[i]))
    early = (submit < 0) & chosen
    if early.any():
        i = int(np.argmax(early))
        expected = "a submit time >= 0 (seconds after UnixStartTime)"
        raise TraceError(log.path, int(log.line[i]), "submit", expected, _num(submit[i]))
    keep = np.flatnonzero(chosen & ~unknown)
    ids = log.job[keep]
    unique, first = np.unique(ids, return_index=True)
    if len(unique) != len(ids):
        dup = np.setdiff1d(np.arange(len(ids)), first)[0]
        expected = "a unique job number"
        raise TraceError(log.path, int(log.line[keep[dup]]), "job", expected, str(ids[dup]))
    order = keep[np.argsort(submit[keep], kind="stable")]
    jobs = Jobs(
        job_id=[str(j) for j in log.job[order].tolist()],
        user=[f"u{u}" for u in log.user[order].tolist()],
        submit=base + submit[order],
        runtime=run[order].astype(np.float64),
        remove=np.full(len(order), np.inf),
        cpus=_requested_cpus(log)[order],
        memory_mb=_requested_memory_mb(log)[order],
    )
    return jobs, n_unknown if skip_unknown_runtime else 0


def _requested_cpus(log: SwfLog) -> np.ndarray:
    """Requested processors, else allocated ones, else one (SWF writes -1 for unknown)."""
    cpus = np.where(log.procs_req > 0, log.procs_req, log.procs_alloc)
    return np.where(cpus > 0, cpus, DEFAULT_CPUS).astype(np.int64)


def _requested_memory_mb(log: SwfLog) -> np.ndarray:
    """Requested memory for the whole job in MB (SWF: KB per processor; -1 for unknown)."""
    per_job = log.mem_req * _requested_cpus(log) / 1024.0
    return np.where(log.mem_req > 0, per_job, DEFAULT_MEMORY_MB)


class _Header:
    """Collects ``; Key: value`` lines; a comment indented to the value column continues it.

    PWA headers wrap long values (Note, Information) with the text aligned under the value; other
    comments (LCG's column legend ``;    #  sub ...``) are kept in ``comments`` instead.
    """

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.lines: dict[str, int] = {}
        self.comments: list[str] = []
        self.key: str | None = None
        self.column = 0

    def add(self, text: str, number: int) -> None:
        match = _KEY.fullmatch(text)
        if match is not None:
            key, value = match.group(1), match.group(2) or ""
            self.values[key] = f"{self.values[key]}\n{value}" if key in self.values else value
            self.lines.setdefault(key, number)
            self.key, self.column = key, match.start(2) if match.group(2) else len(text)
            return
        rest = text[1:].strip()
        indent = len(text) - len(text[1:].lstrip())
        if self.key is not None and rest and indent >= self.column:
            self.values[self.key] += "\n" + rest
            return
        self.key = None
        if rest:
            self.comments.append(rest)


def _int_header(path: Path_, header: dict[str, str], header_line: dict[str, int]) -> dict[str, int]:
    """Integer keys; a count may carry a note after it, as the archive writes partitions
    (CTC-SP2: ``MaxNodes: 338 (batch partition; 512 total)`` is 338)."""
    out: dict[str, int] = {}
    for key in INT_HEADER_KEYS:
        if key in header:
            text = header[key].split("\n")[0].strip()
            match = _LEADING_INT.match(text)
            if match is None:
                raise TraceError(path, header_line[key], key, "an integer", text)
            out[key] = int(match.group(1))
    return out


def _parse_slowly(path: Path_, data: list[str], lines: np.ndarray) -> np.ndarray:
    table = np.empty((len(data), len(SWF_FIELDS)))
    for i, text in enumerate(data):
        tokens = text.split()
        if len(tokens) != len(SWF_FIELDS):
            missing = SWF_FIELDS[len(tokens)] if len(tokens) < len(SWF_FIELDS) else None
            expected = f"{len(SWF_FIELDS)} whitespace-separated SWF fields"
            raise TraceError(path, int(lines[i]), missing, expected, text)
        for j, token in enumerate(tokens):
            try:
                table[i, j] = float(token)
            except ValueError:
                expected = "an integer" if SWF_FIELDS[j] in INT_FIELDS else "a number"
                raise TraceError(path, int(lines[i]), SWF_FIELDS[j], expected, token) from None
    return table


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
