"""A small, strict CSV table reader/writer: named columns as lists of strings, plus source lines.

The common file (no quote characters) is split at C speed with ``str.split``, which reads 1.2 M
rows in about a second where a per-row ``csv.reader`` loop needs three; files with quoted cells
take the ``csv`` module path. Both report the first malformed row by line number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

import numpy as np

from simulator.traces._columns import Path_
from simulator.traces._io import read_text, split_lines, write_text
from simulator.traces.errors import TraceError

_SPECIAL = (",", '"', "\n", "\r")


def read_table(
    path: Path_, required: Sequence[str], optional: Sequence[str] = ()
) -> tuple[dict[str, list[str]], np.ndarray]:
    """Columns by header name and the 1-based source line of each row; blank lines are ignored."""
    text = read_text(path)
    quoted = _quoted_rows(path, text) if '"' in text else None
    if quoted is not None:
        header, rows, lines = quoted
    else:
        all_lines = split_lines(text)
        header = all_lines[0].split(",") if all_lines else []
        rows, lines = [], np.empty(0, dtype=np.int64)
    names = _check_header(path, header, required, optional)
    ncol = len(names)
    expected = f"{ncol} comma-separated fields ({','.join(names)})"
    if quoted is not None:
        for row, line in zip(rows, lines.tolist(), strict=True):
            if len(row) != ncol:
                raise TraceError(path, line, _missing(names, len(row)), expected, ",".join(row))
        columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in names]
        return dict(zip(names, columns, strict=True)), lines
    body = all_lines[1:]
    lines = np.arange(2, len(body) + 2, dtype=np.int64)
    counts = [line.count(",") for line in body]
    if counts.count(ncol - 1) != len(body):
        keep = []
        for i, (line, count) in enumerate(zip(body, counts, strict=True)):
            if count == ncol - 1:
                keep.append(i)
            elif line.strip():
                raise TraceError(path, i + 2, _missing(names, count + 1), expected, line)
        body = [body[i] for i in keep]
        lines = lines[keep]
    tokens = ",".join(body).split(",") if body else []
    return {name: tokens[j::ncol] for j, name in enumerate(names)}, lines


def write_table(path: Path_, names: Sequence[str], columns: Sequence[list[str]]) -> None:
    """Header plus rows; text columns must have gone through ``csv_cells``."""
    body = "\n".join(map(",".join, zip(*columns, strict=True)))
    write_text(path, ",".join(names) + "\n" + (body + "\n" if body else ""))


def _missing(names: list[str], count: int) -> str | None:
    """The first column a short row lacks (None for a row with too many fields)."""
    return names[count] if count < len(names) else None


def _quoted_rows(path: Path_, text: str) -> tuple[list[str], list[list[str]], np.ndarray]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[list[str]] = []
    lines: list[int] = []
    end = 0
    try:
        for row in reader:
            start, end = end + 1, reader.line_num
            if row and (len(row) > 1 or row[0].strip()):
                rows.append(row)
                lines.append(start)
    except csv.Error as exc:
        raise TraceError(path, end + 1, None, "well-formed CSV", str(exc)) from None
    header = rows[0] if rows and lines[0] == 1 else []
    if header:
        rows, lines = rows[1:], lines[1:]
    return header, rows, np.array(lines, dtype=np.int64)


def _check_header(
    path: Path_, header: list[str], required: Sequence[str], optional: Sequence[str]
) -> list[str]:
    names = [h.strip() for h in header]
    allowed = list(required) + list(optional)
    expected = f"a header line with columns {','.join(required)}" + (
        f" (optionally {','.join(optional)})" if optional else ""
    )
    if not any(names):
        raise TraceError(path, 1, None, expected, ",".join(header))
    seen: set[str] = set()
    for name in names:
        if name not in allowed or name in seen:
            what = "duplicate column" if name in seen else "unknown column"
            raise TraceError(path, 1, None, f"{expected}; {what}", name)
        seen.add(name)
    missing = [n for n in required if n not in seen]
    if missing:
        raise TraceError(
            path, 1, None, f"{expected}; missing {','.join(missing)}", ",".join(header)
        )
    return names


def csv_cells(col: list[str]) -> list[str]:
    """Cells quoted where they hold a comma, quote or newline (rare, so first checked per set)."""
    joined = "".join(set(col))
    if not any(ch in joined for ch in _SPECIAL):
        return col
    return ['"' + s.replace('"', '""') + '"' if any(c in s for c in _SPECIAL) else s for s in col]
