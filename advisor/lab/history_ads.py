"""The job ads of ``condor_history`` output, in whichever form an administrator saved it.

``-json`` (an array), ``-jsonl`` (one ad a line), ``-xml``, ``-long`` or the schedd's history
file itself (ads in the old ClassAd syntax, between blank or ``***`` lines), or an ``-af:h``
table (a header of attribute names, then one job a line). Expressions such as a
``RequestMemory`` that follows ``MemoryUsage`` stay expressions, for ``classad2`` to evaluate
in their ad.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from os import PathLike

import classad2

from simulator.traces._io import read_text, split_lines
from simulator.traces.errors import TraceError

FORMS = "condor_history output (-json, -jsonl, -xml, -long, the history file, an -af:h table)"


def read_history_ads(path: str | PathLike[str]) -> list[classad2.ClassAd]:
    """Every job ad in ``path``, in file order; a part that is no ClassAd is a located error."""
    text = read_text(path)
    head = text.lstrip()
    if not head:
        raise TraceError(path, None, None, FORMS, "an empty file")
    if head[0] in "[{":
        return list(_json_ads(path, text))
    if head[0] == "<":
        return _xml_ads(path, text)
    if "=" in head.split("\n", 1)[0]:
        return list(_long_ads(path, text))
    return list(_table_ads(path, text))


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _json_ads(path: str | PathLike[str], text: str) -> Iterator[classad2.ClassAd]:
    """Each object of a JSON array or of a sequence of objects, handed to ``classad2`` as it
    stands in the file: the ``"\\/Expr(...)\\/"`` form of an expression survives only there."""
    decoder = json.JSONDecoder()
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n,[":
            at += 1
        if at == len(text) or text[at] == "]":
            return
        try:
            _, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise TraceError(path, exc.lineno, None, "a JSON object (a job ad)", exc.msg) from exc
        yield _parse(path, text[at:end], _line_of(text, at), classad2.ParserType.JSON)
        at = end


def _xml_ads(path: str | PathLike[str], text: str) -> list[classad2.ClassAd]:
    try:
        return list(classad2.parseAds(text, classad2.ParserType.XML))
    except (ValueError, classad2.ClassAdException) as exc:
        expected = "ClassAds in XML (condor_history -xml)"
        raise TraceError(path, None, None, expected, str(exc)) from exc


def _long_ads(path: str | PathLike[str], text: str) -> Iterator[classad2.ClassAd]:
    block: list[str] = []
    first = 0
    for number, line in enumerate([*split_lines(text), ""], start=1):
        if line.strip() and not line.startswith("***"):
            first = first or number
            block.append(line)
        elif block:
            yield _parse(path, "\n".join(block), first, classad2.ParserType.Old)
            block, first = [], 0


def _parse(
    path: str | PathLike[str], chunk: str, line: int, parser: classad2.ParserType
) -> classad2.ClassAd:
    try:
        return classad2.parseOne(chunk, parser)
    except (ValueError, classad2.ClassAdException) as exc:
        raise TraceError(path, line, None, "a job ad", chunk.split("\n", 1)[0]) from exc


def _table_ads(path: str | PathLike[str], text: str) -> Iterator[classad2.ClassAd]:
    """``-af:h``: whitespace between values, so a value with a space cannot be read here (the
    error says to save ``-json`` instead)."""
    lines = split_lines(text)
    names = lines[0].split()
    for number, line in enumerate(lines[1:], start=2):
        values = line.split()
        if not values:
            continue
        if len(values) != len(names):
            expected = f"{len(names)} values as the header names (or save condor_history -json)"
            raise TraceError(path, number, None, expected, line)
        ad = classad2.ClassAd()
        for name, value in zip(names, values, strict=True):
            if value.lower() != "undefined":
                ad[name] = _table_value(value)
        yield ad


def _table_value(token: str) -> bool | int | float | str:
    if token.lower() in ("true", "false"):
        return token.lower() == "true"
    for kind in (int, float):
        try:
            return kind(token)
        except ValueError:
            pass
    return token
