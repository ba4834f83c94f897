"""Owner-session and HTC-job traces as CSV (optionally .gz), the replay's two input streams.

Sessions: ``login,machine,logout``. Jobs: ``submit,job_id,user,runtime,remove`` and optionally
``replicable``, ``cpus`` and ``memory_mb`` (what the job requests; an empty cell or a missing
column means one core and 128 MB, HTCondor 25's submit defaults).
Times are unix seconds or ISO-8601 with a zone; columns may come in any order after the header.
Readers validate everything they return (a replay on a half-read trace is worse than an error).
"""

from __future__ import annotations

import re
from itertools import repeat

import numpy as np

from simulator.trace_model import DEFAULT_CPUS, DEFAULT_MEMORY_MB, Inventory, Jobs, OwnerSessions
from simulator.traces._columns import (
    Path_,
    format_numbers,
    parse_bools,
    parse_floats,
    parse_times,
)
from simulator.traces._table import csv_cells, read_table, write_table
from simulator.traces.errors import TraceError

SESSION_COLUMNS = ("login", "machine", "logout")
JOB_COLUMNS = ("submit", "job_id", "user", "runtime", "remove")
JOB_OPTIONAL = ("replicable", "cpus", "memory_mb")
RUNTIME_EXPECTED = "a non-negative number of seconds (empty: never finishes)"
CPUS_EXPECTED = f"a whole number of cores >= 1 (empty: {DEFAULT_CPUS})"
MEMORY_EXPECTED = f"a number of MB > 0 (empty: {DEFAULT_MEMORY_MB:g})"
HISTORY_LOOK = re.compile(r"^\s*(\[|\{|<|\w+ = )|\b(QDate|ClusterId|GlobalJobId)\b")
"""The first line of ``condor_history`` output: -json, -jsonl, -xml, -long, -af:h."""
HISTORY_HINT = (
    " (this looks like condor_history output, which a jobs trace is not: convert it first with"
    " `htcondor-advisor trace history FILE --out DIR`)"
)


def read_owner_sessions(path: Path_, inventory: Inventory) -> OwnerSessions:
    """Sessions sorted by login (stable); every machine must be in ``inventory``."""
    cols, lines = read_table(path, SESSION_COLUMNS)
    login = parse_times(cols["login"], path, lines, "login")
    logout = parse_times(cols["logout"], path, lines, "logout")
    names = cols["machine"]
    index = inventory.index()
    machine = np.fromiter(map(index.get, names, repeat(-1)), dtype=np.int32, count=len(names))
    unknown = machine < 0
    if unknown.any():
        i = int(np.argmax(unknown))
        raise TraceError(path, int(lines[i]), "machine", "a machine of the inventory", names[i])
    early = logout < login
    if early.any():
        i = int(np.argmax(early))
        expected = f"a time at or after login ({cols['login'][i]})"
        raise TraceError(path, int(lines[i]), "logout", expected, cols["logout"][i])
    order = np.argsort(login, kind="stable")
    return OwnerSessions(login=login[order], machine=machine[order], logout=logout[order])


def write_owner_sessions(sessions: OwnerSessions, inventory: Inventory, path: Path_) -> None:
    """Write ``sessions`` in file order (the reader re-sorts); machines by inventory name."""
    if not (np.isfinite(sessions.login).all() and np.isfinite(sessions.logout).all()):
        raise ValueError("owner sessions with non-finite login or logout cannot be written")
    names = [m.name for m in inventory.machines]
    idx = sessions.machine.tolist()
    if idx and (min(idx) < 0 or max(idx) >= len(names)):
        raise ValueError("owner session machine index outside the inventory")
    columns = [format_numbers(sessions.login), csv_cells([names[i] for i in idx])]
    columns.append(format_numbers(sessions.logout))
    write_table(path, SESSION_COLUMNS, columns)


def read_jobs(path: Path_) -> Jobs:
    """Jobs sorted by submit (stable); ids unique; a never-finishing job needs a remove time."""
    try:
        cols, lines = read_table(path, JOB_COLUMNS, JOB_OPTIONAL)
    except TraceError as exc:  # a pool's condor_history given as it is: say how to convert it
        if exc.line != 1 or exc.got is None or not HISTORY_LOOK.search(exc.got):
            raise
        raise TraceError(path, 1, exc.field, exc.expected + HISTORY_HINT, exc.got) from None
    submit = parse_times(cols["submit"], path, lines, "submit")
    runtime_col, no_runtime = _blank_to_zero(cols["runtime"])
    runtime = parse_floats(runtime_col, path, lines, "runtime", RUNTIME_EXPECTED, minimum=0.0)
    runtime[no_runtime] = np.inf
    remove_col, no_remove = _blank_to_zero(cols["remove"])
    remove = parse_times(remove_col, path, lines, "remove")
    remove[no_remove] = np.inf
    stuck = no_runtime & no_remove
    if stuck.any():
        i = int(np.argmax(stuck))
        expected = "the time the user removes a job that never finishes (runtime is empty)"
        raise TraceError(path, int(lines[i]), "remove", expected, "")
    early = remove < submit
    if early.any():
        i = int(np.argmax(early))
        expected = f"a time at or after submit ({cols['submit'][i]})"
        raise TraceError(path, int(lines[i]), "remove", expected, cols["remove"][i])
    job_ids, users = cols["job_id"], cols["user"]
    _check_names(path, lines, "job_id", job_ids, unique=True)
    _check_names(path, lines, "user", users, unique=False)
    if "replicable" in cols:
        replicable = parse_bools(cols["replicable"], path, lines, "replicable")
    else:
        replicable = np.zeros(len(submit), dtype=bool)
    cpus, memory_mb = _requests(cols, path, lines)
    order = np.argsort(submit, kind="stable")
    pick = order.tolist()
    return Jobs(
        job_id=[job_ids[i] for i in pick],
        user=[users[i] for i in pick],
        submit=submit[order],
        runtime=runtime[order],
        remove=remove[order],
        replicable=replicable[order],
        cpus=cpus[order],
        memory_mb=memory_mb[order],
    )


def _requests(
    cols: dict[str, list[str]], path: Path_, lines: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The ``cpus`` and ``memory_mb`` columns, defaults where a column or a cell is empty."""
    cpus = _request(cols, path, lines, "cpus", DEFAULT_CPUS, CPUS_EXPECTED)
    whole = (cpus >= 1) & (cpus == np.floor(cpus))
    _first_bad(~whole, cols, path, lines, "cpus", CPUS_EXPECTED)
    memory = _request(cols, path, lines, "memory_mb", DEFAULT_MEMORY_MB, MEMORY_EXPECTED)
    _first_bad(memory <= 0, cols, path, lines, "memory_mb", MEMORY_EXPECTED)
    return cpus.astype(np.int64), memory


def _request(
    cols: dict[str, list[str]],
    path: Path_,
    lines: np.ndarray,
    field: str,
    default: float,
    expected: str,
) -> np.ndarray:
    if field not in cols:
        return np.full(len(lines), float(default))
    col, blank = _blank_to_zero(cols[field])
    values = parse_floats(col, path, lines, field, expected)
    values[blank] = default
    return values


def _first_bad(
    bad: np.ndarray,
    cols: dict[str, list[str]],
    path: Path_,
    lines: np.ndarray,
    field: str,
    expected: str,
) -> None:
    if bad.any():
        i = int(np.argmax(bad))
        raise TraceError(path, int(lines[i]), field, expected, cols[field][i])


def write_jobs(jobs: Jobs, path: Path_) -> None:
    """Write ``jobs``; infinite runtime/remove become empty cells, replicable becomes 1/0; the
    request columns only when some job asks for other than one core and the default memory."""
    finite_or_inf = np.isfinite(jobs.runtime) | np.isposinf(jobs.runtime)
    if not (np.isfinite(jobs.submit).all() and finite_or_inf.all()):
        raise ValueError("jobs with a non-finite submit or a NaN runtime cannot be written")
    if (jobs.never_finishes() & ~np.isfinite(jobs.remove)).any():
        raise ValueError("a job that never finishes needs a finite remove time")
    columns = [
        format_numbers(jobs.submit),
        csv_cells(list(jobs.job_id)),
        csv_cells(list(jobs.user)),
        format_numbers(jobs.runtime, inf_as_empty=True),
        format_numbers(jobs.remove, inf_as_empty=True),
        np.where(jobs.replicable, "1", "0").tolist(),
    ]
    names: tuple[str, ...] = (*JOB_COLUMNS, "replicable")
    if not jobs.requests_defaults():
        columns += [format_numbers(jobs.cpus.astype(np.float64)), format_numbers(jobs.memory_mb)]
        names = (*JOB_COLUMNS, *JOB_OPTIONAL)
    write_table(path, names, columns)


def _blank_to_zero(col: list[str]) -> tuple[list[str], np.ndarray]:
    """Blank cells (meaning 'never') replaced by '0' for parsing, and the mask where they were."""
    blank = [i for i, s in enumerate(col) if not s.strip()]
    mask = np.zeros(len(col), dtype=bool)
    if not blank:
        return col, mask
    mask[blank] = True
    out = list(col)
    for i in blank:
        out[i] = "0"
    return out, mask


def _check_names(path: Path_, lines: np.ndarray, field: str, col: list[str], unique: bool) -> None:
    distinct = set(col)
    if any(not s.strip() for s in distinct):
        i = next(i for i, s in enumerate(col) if not s.strip())
        raise TraceError(path, int(lines[i]), field, f"a non-empty {field}", col[i])
    if unique and len(distinct) != len(col):
        first: dict[str, int] = {}
        for i, s in enumerate(col):
            if s in first:
                expected = f"a unique job id (also on line {int(lines[first[s]])})"
                raise TraceError(path, int(lines[i]), field, expected, s)
            first[s] = i
