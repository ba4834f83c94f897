"""What the live source observed, appended to ``DIR/condor-journal/`` for ``trace export``.

``events.jsonl`` holds one canonical event per line (its kind and fields), ``machines.json`` the
inventory. Append-only and line-oriented so a crash loses at most the line being written.

It keeps the last ``pool.journal_keep`` of events: once its oldest is a month past that, its
older lines are cut off, in a new file ``events-from-N.jsonl`` whose name says how many bytes came
before it, so that a place in the journal (a snapshot's ``journal_bytes``) keeps its meaning. A
month's slack makes the rewrite monthly rather than daily.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import logging
import os
import re
import shutil
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

from plugins.contract.clock import DAY
from plugins.contract.events import ALL_EVENT_KINDS, Event
from plugins.contract.policy import MachineInfo

JOURNAL_DIR = "condor-journal"
KINDS = {kind.__name__: kind for kind in ALL_EVENT_KINDS}
TRIM_SLACK_S = 30 * DAY
REPEAT_S = 3600.0
"""How often a journal the disk has no room for is said again while it lasts."""
_TRIMMED = re.compile(r"events-from-(\d+)\.jsonl")
_TIME = re.compile(rb'"time": (-?[0-9.eE+-]+)')
log = logging.getLogger("htcondor_advisor.condor")


def events_file(directory: Path) -> tuple[Path, int]:
    """The journal's events file in ``directory`` and how many bytes were cut off before it."""
    found = (directory / "events.jsonl", 0)
    for path in directory.glob("events-from-*.jsonl"):
        match = _TRIMMED.fullmatch(path.name)
        if match and int(match.group(1)) > found[1]:
            found = (path, int(match.group(1)))
    return found


class Journal:
    """Private like the snapshots beside it: directories 0700 and files 0600, whatever the umask
    (the state directory itself is made by the daemon before the pool is built)."""

    def __init__(self, state_dir: Path, keep_s: float | None = None) -> None:
        """``keep_s``: cut off events older than that many seconds (None: keep them all)."""
        self.dir = Path(state_dir) / JOURNAL_DIR
        self.dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.dir.mkdir(exist_ok=True, mode=0o700)
        os.chmod(self.dir, 0o700)
        self.keep_s = keep_s
        self.path, self.base = events_file(self.dir)
        leftovers = [self.dir / "events.jsonl", *self.dir.glob("events-from-*")]
        for stale in leftovers:  # what a trim cut short by a crash left
            if stale != self.path and stale.exists():
                stale.unlink()
        for path in (self.path, self.dir / "machines.json"):  # 0644 from an earlier version
            if path.exists():
                os.chmod(path, 0o600)
        _cut_torn_line(self.path)
        self.oldest = _first_time(self.path)
        self._lock = threading.Lock()  # the snapshot job asks size() while the source appends
        self._unsaved: Mapping[str, MachineInfo] | None = None
        """The machines a full disk kept from ``machines.json`` (written at the next append)."""
        self._failing: tuple[str, float] | None = None  # why appends fail, when last said
        self._lost = 0  # polls not journalled since the last append that was

    def append(self, events: Iterable[Event], now: float) -> None:
        """Write ``events``, then cut off what is past keeping at ``now`` (the daemon's clock:
        a host whose clock is years ahead must not empty the journal). Never raises on a full
        disk: the journal serves ``trace export`` and relearning, the poll's events must still
        reach the policy; they are left out whole, with a warning."""
        events = list(events)
        lines = [json.dumps({"kind": type(e).__name__, **_fields(e)}) + "\n" for e in events]
        with self._lock:
            if self._unsaved is not None:
                self.save_machines(self._unsaved)
            if not lines:
                return
            try:  # on a full disk: no torn line amid the journal, and the poll goes on
                if self._lost:  # (in case the disk refused the cut back too)
                    _cut_torn_line(self.path)
                _append(self.path, "".join(lines).encode())
            except OSError as exc:
                self._not_journalled(f"{exc.strerror or exc} ({self.path})", now)
                return
            if self._lost:
                log.info("journal: written again; %d poll(s) were not journalled", self._lost)
                self._failing, self._lost = None, 0
            if self.oldest is None:
                self.oldest = min(e.time for e in events)
            if self.keep_s is not None and now - self.oldest > self.keep_s + TRIM_SLACK_S:
                try:
                    self._trim(now - self.keep_s)
                except OSError as exc:  # the journal stays whole; cut at a later append
                    log.warning("journal: old events not cut off: %s", exc.strerror or exc)

    def _not_journalled(self, why: str, now: float) -> None:
        """Said when it begins, when the reason changes and hourly, not at every poll."""
        self._lost += 1
        said = self._failing
        if said is None or said[0] != why or now - said[1] >= REPEAT_S:
            self._failing = (why, now)
            log.warning(
                "journal: events of this poll are not journalled: %s; the policy still sees them",
                why,
            )

    def cut_back(self, size: int) -> None:
        """Drop what was written past ``size``, where a snapshot the source resumes from stood:
        a stop without a last snapshot (a crash, a kill) left events the resumed source reports
        again, and a later restart relearned both copies (two logins and one logout: a machine
        taken for good). A journal shorter than that, or already cut past it, is left alone."""
        with self._lock:
            end = size - self.base
            length = self.path.stat().st_size if self.path.exists() else 0
            if not 0 <= end < length:
                return
            os.truncate(self.path, end)
            self.oldest = _first_time(self.path)
        log.warning(
            "journal: cut off the %d bytes written after the snapshot resumed from: the pool "
            "reports those events again",
            length - end,
        )

    def size(self) -> int:
        """Bytes of events written so far, those cut off included: where a snapshot taken now
        stands in the journal."""
        with self._lock:
            return self.base + (self.path.stat().st_size if self.path.exists() else 0)

    def _trim(self, cutoff: float) -> None:
        """Keep the lines from the first event at ``cutoff`` or later, in a new file."""
        with open(self.path, "rb") as old:
            cut = 0
            for line in old:
                match = _TIME.search(line)
                if match and float(match.group(1)) >= cutoff:
                    break
                cut += len(line)
            base = self.base + cut
            kept = self.dir / f"events-from-{base}.jsonl"
            try:
                with _private(kept.with_suffix(".tmp"), os.O_TRUNC) as new:
                    old.seek(cut)
                    shutil.copyfileobj(old, new.buffer)
                    new.flush()
                    os.fsync(new.fileno())
            except OSError:
                kept.with_suffix(".tmp").unlink(missing_ok=True)
                raise
        os.replace(kept.with_suffix(".tmp"), kept)
        self.path.unlink()
        days = (self.keep_s or 0.0) / DAY
        log.info("journal: cut off %d bytes of events older than %g days", cut, days)
        self.path, self.base, self.oldest = kept, base, _first_time(kept)

    def save_machines(self, machines: Mapping[str, MachineInfo]) -> None:
        """Write the inventory; on a full disk, say so and write it again at the next append
        (the source saves it only when a machine is new, and the poll must go on)."""
        path = self.dir / "machines.json"
        tmp = path.with_suffix(".tmp")
        data = {name: dataclasses.asdict(info) for name, info in sorted(machines.items())}
        try:
            with _private(tmp, os.O_TRUNC) as out:
                out.write(json.dumps(data, indent=1))
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            if self._unsaved is None:
                why = f"{exc.strerror or exc} ({path})"
                log.warning("journal: machines not saved: %s; tried again at the next poll", why)
            self._unsaved = machines
            return
        self._unsaved = None


def _private(path: Path, mode: int) -> TextIO:
    """``path`` opened for writing text, created 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | mode, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "w", encoding="utf-8")


def _append(path: Path, data: bytes) -> None:
    """``data`` at the end of ``path`` whole, or OSError and ``path`` as it was: a write the
    disk cut short would leave a torn line that the next append is joined to."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(fd, 0o600)
        end = os.fstat(fd).st_size
        try:
            write_all(fd, data)
        except OSError:
            os.ftruncate(fd, end)
            raise
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """All of ``data`` or OSError: on a disk that fills, ``os.write`` writes what fits and says
    how much, and only the write after it fails (ENOSPC); a short write unchecked is a torn file."""
    rest = memoryview(data)
    while rest:
        written = os.write(fd, rest)
        if written == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        rest = rest[written:]


def _first_time(path: Path) -> float | None:
    """The time of the journal's first event (None: no event yet)."""
    if not path.exists():
        return None
    with open(path, "rb") as journal:
        match = _TIME.search(journal.readline())
    return float(match.group(1)) if match else None


def _cut_torn_line(path: Path) -> None:
    """A crash mid-write leaves a last line without its newline: the next append would join an
    event to it, an unreadable line amid the journal, which ``trace export`` refuses."""
    if not path.exists():
        return
    with open(path, "rb+") as journal:
        end = journal.seek(0, os.SEEK_END)
        journal.seek(max(end - 1, 0))
        if journal.read(1) in (b"\n", b""):
            return
        while end > 0:  # back to the last newline, a block at a time
            start = max(0, end - 65536)
            journal.seek(start)
            at = journal.read(end - start).rfind(b"\n")
            if at >= 0:
                journal.truncate(start + at + 1)
                return
            end = start
        journal.truncate(0)


def _fields(event: Event) -> dict[str, object]:
    return {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
