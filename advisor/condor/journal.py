"""What the live source observed, appended to ``DIR/condor-journal/`` for ``trace export``.

``events.jsonl`` holds one canonical event per line (its kind and fields), ``machines.json`` the
inventory. Append-only and line-oriented so a crash loses at most the line being written.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

from plugins.contract.events import ALL_EVENT_KINDS, Event
from plugins.contract.policy import MachineInfo

JOURNAL_DIR = "condor-journal"
KINDS = {kind.__name__: kind for kind in ALL_EVENT_KINDS}


class Journal:
    """Private like the snapshots beside it: directories 0700 and files 0600, whatever the umask
    (the state directory itself is made by the daemon before the pool is built)."""

    def __init__(self, state_dir: Path) -> None:
        self.dir = Path(state_dir) / JOURNAL_DIR
        self.dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.dir.mkdir(exist_ok=True, mode=0o700)
        os.chmod(self.dir, 0o700)
        for name in ("events.jsonl", "machines.json"):  # made 0644 by an earlier version
            if (self.dir / name).exists():
                os.chmod(self.dir / name, 0o600)
        _cut_torn_line(self.dir / "events.jsonl")

    def append(self, events: Iterable[Event]) -> None:
        lines = [json.dumps({"kind": type(e).__name__, **_fields(e)}) + "\n" for e in events]
        if lines:
            with _private(self.dir / "events.jsonl", os.O_APPEND) as out:
                out.writelines(lines)

    def size(self) -> int:
        """Bytes of events written so far: where a snapshot taken now stands in the journal."""
        path = self.dir / "events.jsonl"
        return path.stat().st_size if path.exists() else 0

    def save_machines(self, machines: Mapping[str, MachineInfo]) -> None:
        path = self.dir / "machines.json"
        tmp = path.with_suffix(".tmp")
        data = {name: dataclasses.asdict(info) for name, info in sorted(machines.items())}
        with _private(tmp, os.O_TRUNC) as out:
            out.write(json.dumps(data, indent=1))
        os.replace(tmp, path)


def _private(path: Path, mode: int) -> TextIO:
    """``path`` opened for writing text, created 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | mode, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "w", encoding="utf-8")


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
