"""The job ads of ``condor_history`` output, in whichever form an administrator saved it.

``-json`` (an array), ``-jsonl`` (one ad a line), ``-xml``, ``-long`` or the schedd's history
file itself (ads in the old ClassAd syntax, between blank or ``***`` lines), or an ``-af:h``
table (a header of attribute names, then one job a line). Expressions such as a
``RequestMemory`` that follows ``MemoryUsage`` stay expressions, for ``classad2`` to evaluate
in their ad.

A year of a busy access point's history is gigabytes of ads of a few hundred attributes, of
which the replay needs about fifteen. The line-based forms (``-long``, the history file,
``-jsonl``, ``-af:h``) are read a line at a time, and only the attributes asked for are parsed;
an ad whose expression among them refers to others is parsed whole. ``-json`` and ``-xml``
are read in one piece.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import re
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import partial
from os import PathLike
from typing import Any, TextIO

import classad2

from simulator.traces._io import GZIP_MAGIC
from simulator.traces.errors import TraceError

FORMS = "condor_history output (-json, -jsonl, -xml, -long, the history file, an -af:h table)"
CUT_SHORT = "condor_history {} output that ends with {!r}: the file is cut short, save it again"
CUT_LONG = (
    "each ad of condor_history -long output to end with a blank line (the history file's, with"
    " a *** line): the file is cut short within its last ad, save it again"
)
Names = Collection[str] | None
"""The attributes to keep of each ad (None: every one)."""
CHUNK = 1 << 23
"""Characters read at a time from a ``-long`` history."""
SEPARATOR = re.compile(r"^(?:\*\*\*[^\n]*|[ \t\r]*)\n", re.MULTILINE)
"""A line between two ``-long`` ads: blank, or the history file's ``***`` banner."""
HOW = "condor_history -json > FILE, or -jsonl, -xml, -long, -af:h; docs/trace-formats.md"
EVENT_LOG = re.compile(r"^(?:\d{3} \(\d+\.\d+\.\d+\) |\.\.\.\s*$)")
"""The first line of a job event log: an event's header, or the ``...`` between events."""


def read_history_ads(path: str | PathLike[str], names: Names = None) -> Iterator[classad2.ClassAd]:
    """Every job ad in ``path``, in file order, with ``names`` only where given; a part that
    is no ClassAd is a located error."""
    try:
        with _open(path) as stream:
            ads = 0
            for ad in _ads(path, stream, names):
                ads += 1
                yield ad
            if not ads:
                raise TraceError(path, None, None, f"condor_history job ads ({HOW})", "no job ad")
    except UnicodeDecodeError as exc:
        raise TraceError(path, None, None, "UTF-8 text", str(exc)) from exc
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(path, None, None, "a readable file (gzip or text)", str(exc)) from exc


def _ads(path: str | PathLike[str], stream: TextIO, names: Names) -> Iterator[classad2.ClassAd]:
    """The form is told by the first line that is not blank."""
    skipped = 0
    first = stream.readline()
    while first and not first.strip():
        skipped, first = skipped + 1, stream.readline()
    if not first:
        raise TraceError(path, None, None, FORMS, "an empty file")
    if EVENT_LOG.match(first):
        why = f"condor_history output, and this is a job event log: save its jobs' ads ({HOW})"
        raise TraceError(path, skipped + 1, None, why)
    if first.lstrip()[0] in "[{":
        yield from _json_ads(path, itertools.chain([first], stream), skipped, names)
    elif first.lstrip()[0] == "<":
        yield from _xml_ads(path, first + stream.read())
    elif "=" in first:
        chunks = itertools.chain([first], iter(partial(stream.read, CHUNK), ""))
        yield from _long_ads(path, chunks, skipped, names)
    else:
        yield from _table_ads(path, itertools.chain([first], stream), skipped, names)


def _open(path: str | PathLike[str]) -> TextIO:
    """The file as text, gunzipped when it is gzip (by name or magic), UTF-8 with an optional
    byte-order mark."""
    with open(path, "rb") as raw:
        gzipped = str(path).endswith(".gz") or raw.read(2) == GZIP_MAGIC
    binary = gzip.open(path, "rb") if gzipped else open(path, "rb")  # noqa: SIM115
    return io.TextIOWrapper(binary, encoding="utf-8-sig")


def _kept(ad: classad2.ClassAd, whole: Callable[[], classad2.ClassAd]) -> classad2.ClassAd:
    """``ad``, or the whole ad where one of its expressions refers to an attribute left out."""
    for name in ad:
        if isinstance(ad[name], classad2.ExprTree) and ad.eval(name) is classad2.Value.Undefined:
            return whole()
    return ad


def _json_ads(
    path: str | PathLike[str], lines: Iterator[str], skipped: int, names: Names
) -> Iterator[classad2.ClassAd]:
    """``-jsonl`` a line at a time; an array (or objects across lines) in one piece."""
    first = next(lines)
    try:
        one = json.loads(first) if first.lstrip().startswith("{") else None
    except json.JSONDecodeError:
        one = None
    objects: Iterable[tuple[int, Any]]
    if isinstance(one, dict):
        objects = itertools.chain([(skipped + 1, one)], _json_lines(path, lines, skipped + 1))
    else:
        objects = _json_text(path, first + "".join(lines), skipped)
    for number, obj in objects:
        if not isinstance(obj, dict):
            raise TraceError(path, number, None, "a JSON object (a job ad)", str(obj)[:40])
        yield _kept(_from_json(obj, names), partial(_from_json, obj, None))


def _json_lines(
    path: str | PathLike[str], lines: Iterator[str], done: int
) -> Iterator[tuple[int, Any]]:
    for number, line in enumerate(lines, start=done + 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise TraceError(path, number, None, "a JSON object (a job ad)", exc.msg) from exc


def _json_text(path: str | PathLike[str], text: str, skipped: int) -> Iterator[tuple[int, Any]]:
    """An array (``-json``) must end: a file cut short between two ads is refused, as one cut
    within an ad is."""
    decoder = json.JSONDecoder()
    array = text.lstrip().startswith("[")
    at = 0
    while True:
        while at < len(text) and text[at] in " \t\r\n,[":
            at += 1
        if at == len(text) and array:
            end = skipped + text.rstrip().count("\n") + 1
            raise TraceError(path, end, None, CUT_SHORT.format("-json", "]"))
        if at == len(text) or text[at] == "]":
            return
        line = skipped + text.count("\n", 0, at) + 1
        try:
            obj, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            where = skipped + exc.lineno
            raise TraceError(path, where, None, "a JSON object (a job ad)", exc.msg) from exc
        yield line, obj


def _from_json(obj: dict[str, Any], names: Names) -> classad2.ClassAd:
    """A ClassAd of a JSON ad's scalars; ``"\\/Expr(...)\\/"`` (decoded, ``/Expr(...)/``) is an
    expression."""
    ad = classad2.ClassAd()
    for name, value in obj.items():
        if names is not None and name not in names:
            continue
        if isinstance(value, str) and value.startswith("/Expr(") and value.endswith(")/"):
            ad[name] = classad2.ExprTree(value[6:-2])
        elif isinstance(value, bool | int | float | str):
            ad[name] = value
    return ad


def _xml_ads(path: str | PathLike[str], text: str) -> list[classad2.ClassAd]:
    """Whole ads: the text is read in one piece anyway, so leaving attributes out saves nothing."""
    if "<classads>" in text and not text.rstrip().endswith("</classads>"):
        last = text.rstrip().count("\n") + 1
        cut = text.rstrip().rpartition("\n")[2].strip()
        raise TraceError(path, last, None, CUT_SHORT.format("-xml", "</classads>"), cut)
    try:
        return list(classad2.parseAds(text, classad2.ParserType.XML))
    except (ValueError, classad2.ClassAdException) as exc:
        expected = "ClassAds in XML (condor_history -xml)"
        raise TraceError(path, None, None, expected, str(exc)) from exc


def _long_ads(
    path: str | PathLike[str], chunks: Iterable[str], skipped: int, names: Names
) -> Iterator[classad2.ClassAd]:
    """Ads between separator lines, split and filtered by regular expressions. 100,000 ads of
    the test pool's history file (325 MB), parsed whole and kept, took 66 s and 2.8 GB; so,
    24 s and 110 MB (the whole command)."""
    wanted = None if names is None else _lines_of(names)
    line = skipped + 1
    for block, ended in _blocks(chunks):
        if not ended:  # condor_history ends each ad with a blank line, the history file with ***
            last = block.rstrip("\n").rpartition("\n")[2]
            raise TraceError(path, line + block.rstrip("\n").count("\n"), None, CUT_LONG, last)
        if block:
            kept = block if wanted is None else "\n".join(wanted.findall(block))
            ad = _parse(path, kept, line)
            yield _kept(ad, partial(_parse, path, block, line))
        line += block.count("\n") + 1


def _blocks(chunks: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """The text between separators (a blank line or a ``***`` banner), each with its lines'
    newlines (an empty string for each separator that follows another), and whether a
    separator ended it: the text after the last one ends the file within an ad."""
    pending = ""
    for chunk in chunks:
        *done, pending = SEPARATOR.split(pending + chunk)
        yield from ((block, True) for block in done)
    yield pending, not pending.strip()


def _lines_of(names: Collection[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"^(?:{alternatives})[ \t]*=[^\n]*$", re.MULTILINE | re.IGNORECASE)


def _parse(path: str | PathLike[str], chunk: str, line: int) -> classad2.ClassAd:
    try:
        return classad2.parseOne(chunk, classad2.ParserType.Old)
    except (ValueError, classad2.ClassAdException) as exc:
        raise TraceError(path, line, None, "a job ad", chunk.split("\n", 1)[0]) from exc


def _table_ads(
    path: str | PathLike[str], lines: Iterator[str], skipped: int, names: Names
) -> Iterator[classad2.ClassAd]:
    """``-af:h``: whitespace between values, so a value with a space cannot be read here (the
    error says to save ``-json`` instead)."""
    header = next(lines).split()
    for number, line in enumerate(lines, start=skipped + 2):
        values = line.split()
        if not values:
            continue
        if len(values) != len(header):
            expected = f"{len(header)} values as the header names (or save condor_history -json)"
            raise TraceError(path, number, None, expected, line.rstrip("\n"))
        ad = classad2.ClassAd()
        for name, value in zip(header, values, strict=True):
            if value.lower() != "undefined" and (names is None or name in names):
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
