"""Snapshots of what the daemon learned: atomic, versioned, checksummed JSON, the last few kept.

A snapshot is written to a temporary file, fsync'ed, renamed over its final name and the directory
fsync'ed, so a crash leaves either the old set or the new one, never half a file; a temporary file
a crash left behind is removed when the daemon starts again. Files are 0600 in a 0700 directory
whatever the umask (the daemon tightens a directory of its own it finds more open). Only JSON is
read back (no pickle), and a snapshot whose checksum, format or version does not match is
reported and skipped in favour of the next older one; the daemon moves it, and any snapshot its
policy cannot restore, to ``unusable/`` (kept for inspection, never pruned as if it were old).

The state is serialised once and the checksum taken of what that wrote: the snapshot runs
beside the poll (two scheduler threads), and parts of the state are the live objects the poll
updates, so serialising twice could checksum one state and write another, and the daemon would
later find its newest snapshot "corrupt".
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.condor.journal import write_all
from advisor.daemon.logs import iso
from plugins.contract.config_checks import ConfigError

FORMAT = "htcondor-advisor-snapshot"
VERSION = 1
NAME = re.compile(r"^snapshot-(\d{8})\.json$")
TEMPORARY = re.compile(r"^\.snapshot-\d{8}\.json\.(\d+)\.tmp$")
UNUSABLE = "unusable"
"""Where snapshots that cannot be loaded are moved (inside the state directory)."""
OWN_ENTRIES = re.compile(r"^(snapshot-\d{8}\.json|\.snapshot-.*\.tmp|condor-journal|unusable)$")
"""What the daemon keeps in its state directory; a directory holding only these is its own."""

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


def private_directory(directory: Path, tighten: bool = False) -> None:
    """Make ``directory`` (and missing parents, as ``mkdir -p``) 0700 whatever the umask.

    With ``tighten`` (the daemon at start), an existing directory more open than that is made
    0700 when it is this user's and holds only the daemon's files; a shared one (``/tmp``,
    ``/var/lib``) is left alone with a warning, the snapshots in it being 0600 all the same.
    OSError when it cannot be made or is no directory.
    """
    try:
        directory.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        if not directory.is_dir():
            why = "exists and is not a directory"
            raise NotADirectoryError(errno.ENOTDIR, why, str(directory)) from None
    else:
        os.chmod(directory, 0o700)  # whatever the umask took away or left
        return
    if not tighten:
        return
    info = directory.stat()
    mode = stat.S_IMODE(info.st_mode)
    if not mode & 0o077:
        return
    ours = info.st_uid == os.geteuid() and not mode & stat.S_ISVTX
    if ours and all(OWN_ENTRIES.match(entry.name) for entry in directory.iterdir()):
        os.chmod(directory, 0o700)
        log.warning(
            "%s was mode %04o; tightened to 0700 (learned state is private)",
            directory,
            mode,
        )
    else:
        log.warning(
            "%s is mode %04o and not only the advisor's: left as it is; snapshots stay 0600, but "
            "others can see and delete them; give state.directory a directory of its own",
            directory,
            mode,
        )


class StateStore:
    def __init__(self, directory: Path, keep: int = 5) -> None:
        self.directory = directory
        self.keep = keep
        private_directory(directory)
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
        """Write the next snapshot atomically and prune to the newest ``keep``; OSError (the
        disk full, ...) when it cannot be written whole, the older snapshots left as they were."""
        existing = self.snapshots()
        seq = existing[0][0] + 1 if existing else 1
        final = self.directory / f"snapshot-{seq:08d}.json"
        try:  # one serialisation, and the checksum of what it wrote (module docstring)
            text = json.dumps(state, separators=(",", ":"), allow_nan=True)
        except (TypeError, ValueError) as exc:  # a policy's own state_dict(), most likely
            raise ConfigError(
                f"the learned state cannot be saved as JSON ({type(exc).__name__}: {exc}); a "
                "policy's state_dict() returns only dicts, lists, strings, numbers, booleans "
                "and None (docs/writing-a-policy.md)"
            ) from None
        digest = _digest(json.loads(text))
        payload = {"format": FORMAT, "version": VERSION, "saved_at": now, "sha256": digest}
        data = (json.dumps(payload, separators=(",", ":"))[:-1] + ',"state":' + text + "}").encode()
        tmp = self.directory / f".{final.name}.{os.getpid()}.tmp"
        try:  # a disk that fills fails the save: nothing renamed or pruned, the older ones stay
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.fchmod(fd, 0o600)  # the umask may have taken more
                write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._sync_directory()
        self.last_saved_at = now
        for _, old in existing[self.keep - 1 :]:
            old.unlink(missing_ok=True)
        return final

    def save_or_say(self, state: dict[str, Any], now: float) -> Path | None:
        """``save``, or None when the disk refused it, said in one line: the daemon serves on
        and tries again at the next snapshot."""
        try:
            path = self.save(state, now)
        except OSError as exc:
            why = exc.strerror or str(exc)
            log.error(
                "snapshot not written: %s (%s); the older snapshots are kept", why, self.directory
            )
            return None
        log.debug("snapshot %s at %s", path.name, iso(now))
        return path

    def _sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def remove_orphans(self) -> list[str]:
        """Delete temporary files a crash left between write and rename (call at start, when no
        snapshot of this process is being written); their names."""
        removed = []
        for path in self.directory.iterdir():
            match = TEMPORARY.match(path.name)
            if match and int(match.group(1)) != os.getpid():
                path.unlink(missing_ok=True)
                removed.append(path.name)
        if removed:
            log.info("removed %d temporary file(s) left by a crash: %s", len(removed), removed)
        return removed

    def candidates(self, set_aside: bool = False) -> Iterator[Loaded]:
        """Snapshots that read back intact, newest first; broken ones are logged, listed in
        ``skipped`` and, with ``set_aside`` (the daemon at start), moved to ``unusable/``."""
        self.skipped = []
        for _, path in self.snapshots():
            try:
                payload = read_snapshot(path)
                saved_at = float(payload["saved_at"])
            except (ValueError, TypeError, KeyError) as exc:
                reason = str(exc) if isinstance(exc, ValueError) else "no saved_at time"
                log.warning("skipping corrupt snapshot %s: %s", path, reason)
                self.skipped.append(f"{path.name}: {reason}")
                if set_aside:
                    self.set_aside(path, reason)
                continue
            self.last_saved_at = saved_at
            yield Loaded(payload["state"], path, saved_at, list(self.skipped))

    def load_newest(self) -> Loaded | None:
        """The newest snapshot that reads back intact; broken ones are logged and skipped."""
        return next(self.candidates(), None)

    def set_aside(self, path: Path, reason: str) -> Path | None:
        """Move a snapshot that cannot be used to ``unusable/`` (None if that fails too)."""
        aside = self.directory / UNUSABLE
        try:
            aside.mkdir(mode=0o700, exist_ok=True)
            target = aside / path.name
            n = 1
            while target.exists():
                n += 1
                target = aside / f"{path.stem}.{n}{path.suffix}"
            os.replace(path, target)
        except OSError as exc:
            log.error("could not move unusable snapshot %s aside (%s): %s", path, exc, reason)
            return None
        log.warning("moved unusable snapshot %s to %s: %s", path.name, target, reason)
        return target


def read_snapshot(path: Path) -> dict[str, Any]:
    """A snapshot's payload, or ValueError saying what is wrong with it."""
    try:
        payload = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
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
