"""Snapshots of what the daemon learned: atomic, versioned, checksummed JSON, the last few kept.

A snapshot is written to a temporary file, fsync'ed, renamed over its final name and the directory
fsync'ed, so a crash leaves either the old set or the new one, never half a file. Files are created
0600 in a 0700 directory. Only JSON is read back (no pickle), and a snapshot whose checksum, format
or version does not match is reported and skipped in favour of the next older one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = "htcondor-advisor-snapshot"
VERSION = 1
NAME = re.compile(r"^snapshot-(\d{8})\.json$")

log = logging.getLogger("htcondor_advisor.state")


@dataclass
class Loaded:
    state: dict[str, Any]
    path: Path
    saved_at: float
    skipped: list[str] = field(default_factory=list)


def _digest(state: Any) -> str:
    canonical = json.dumps(state, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


class StateStore:
    def __init__(self, directory: Path, keep: int = 5) -> None:
        self.directory = directory
        self.keep = keep
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.skipped: list[str] = []
        self.last_saved_at: float | None = None

    def snapshots(self) -> list[tuple[int, Path]]:
        """Existing snapshots, newest first."""
        found = []
        for path in self.directory.iterdir():
            match = NAME.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found, reverse=True)

    def save(self, state: dict[str, Any], now: float) -> Path:
        """Write the next snapshot atomically and prune to the newest ``keep``."""
        existing = self.snapshots()
        seq = existing[0][0] + 1 if existing else 1
        final = self.directory / f"snapshot-{seq:08d}.json"
        payload = {
            "format": FORMAT,
            "version": VERSION,
            "saved_at": now,
            "sha256": _digest(state),
            "state": state,
        }
        data = json.dumps(payload, separators=(",", ":")).encode()
        tmp = self.directory / f".{final.name}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
        self._sync_directory()
        self.last_saved_at = now
        for _, old in existing[self.keep - 1 :]:
            old.unlink(missing_ok=True)
        return final

    def _sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def load_newest(self) -> Loaded | None:
        """The newest snapshot that reads back intact; broken ones are logged and skipped."""
        skipped: list[str] = []
        for _, path in self.snapshots():
            try:
                payload = read_snapshot(path)
            except ValueError as exc:
                log.warning("skipping corrupt snapshot %s: %s", path, exc)
                skipped.append(f"{path.name}: {exc}")
                continue
            self.skipped = skipped
            self.last_saved_at = float(payload["saved_at"])
            return Loaded(payload["state"], path, self.last_saved_at, skipped)
        self.skipped = skipped
        return None


def read_snapshot(path: Path) -> dict[str, Any]:
    """A snapshot's payload, or ValueError saying what is wrong with it."""
    try:
        payload = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"unreadable ({exc})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValueError("not an htcondor-advisor snapshot")
    if payload.get("version") != VERSION:
        raise ValueError(f"version {payload.get('version')!r}, this build reads {VERSION}")
    if not isinstance(payload.get("state"), dict) or payload.get("sha256") != _digest(
        payload["state"]
    ):
        raise ValueError("checksum mismatch")
    return payload
