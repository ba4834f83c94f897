"""Checks of a checked configuration against this machine: listen address, paths, files.

Kept apart from the key checks because they look at the host (DNS, the file system) rather than
at the document; ``check-config`` runs them without changing anything, ``run`` also prepares.
"""

from __future__ import annotations

import errno
import os
import pwd
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.daemon import fields as f
from advisor.daemon.config_errors import FAILED, Problems
from advisor.daemon.service_user import service_account, unreadable
from advisor.daemon.state_store import private_directory

if TYPE_CHECKING:
    from advisor.daemon.config import DaemonConfig


MISSING_FIXES = {
    "pool.token_file": "create it as deploy/TOKENS.md shows, or set null for a pool without token",
}
UNREADABLE_FIXES = {"pool.token_file": "give it to that user as deploy/TOKENS.md shows"}


def check_host(config: DaemonConfig, starting: bool = False) -> None:
    """Check the paths and the listen address against this machine, every error at once (keys
    that failed their own check are skipped): ``check-config`` and every reload without changing
    anything, the files as the service user will read them (``service_user``); ``run``
    (``starting``) also creates the state directory 0700 and checks that this process, the
    service, can write it and read the files."""
    problems = Problems()
    if config.publish["listen"] is not FAILED:
        problems.check(check_listen, config.publish["listen"])
    directory = config.state["directory"]
    if directory is not FAILED:
        problems.check(prepare_state_directory if starting else _check_directory_path, directory)
    reader = None if starting else service_account()
    pool = {} if config.pool is FAILED else config.pool
    for key, needed in (("token_file", True), ("scenario_config", True), ("event_log", False)):
        path = pool.get(key)
        if path is not None and path is not FAILED:
            problems.check(_check_file, path, f"pool.{key}", needed, reader)
    problems.raise_any()


def check_listen(listen: tuple[str, int]) -> None:
    """``publish.listen``'s host resolves to an address of the family the endpoint binds."""
    host, port = listen
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        socket.getaddrinfo(host, port, family, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)
    except (OSError, UnicodeError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        version = "IPv6" if family == socket.AF_INET6 else "IPv4"
        raise f.ConfigError(
            f"publish.listen: host {host!r} does not resolve to an {version} address ({why}); "
            "use an address of this machine such as 127.0.0.1"
        ) from None


BIND_FIXES = {
    errno.EADDRINUSE: "is in use (another htcondor-advisor?); choose another port",
    errno.EADDRNOTAVAIL: "is not an address of this machine; use one of its own, e.g. 127.0.0.1",
    errno.EACCES: "needs privileges (ports below 1024); choose a port from 1024 up",
}


def listen_error(
    listen: tuple[str, int], exc: OSError, key: str = "publish.listen"
) -> f.ConfigError | None:
    """The ConfigError naming ``key`` (the option it came from, ``--listen``, or the key) for an
    endpoint that could not bind ``listen`` (None: ``exc`` is no bind failure). Socket errors
    carry no file name, which tells them from file errors."""
    host, port = listen
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(exc, socket.gaierror):
        return f.ConfigError(
            f"{key}: host {host!r} does not resolve ({exc.strerror}); "
            "use an address of this machine such as 127.0.0.1"
        )
    fix = BIND_FIXES.get(exc.errno or 0)
    if fix is None or exc.filename is not None:
        return None
    return f.ConfigError(f"{key}: {shown} {fix}")


def prepare_state_directory(directory: Path) -> None:
    """Create ``state.directory`` 0700 (or tighten it) and check it is writable."""
    try:
        private_directory(directory, tighten=True)
        if not os.access(directory, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(directory))
    except OSError as exc:
        _check_directory_path(directory)  # a file in the way says so more plainly
        raise f.ConfigError(
            f"state.directory: cannot use {str(directory)!r} ({exc.strerror or exc}); "
            "give a directory the service user can create or write (systemd: StateDirectory=)"
        ) from None


def _check_directory_path(directory: Path) -> None:
    """A state directory that is a file, or under a file, can never be created."""
    probe = directory
    while True:
        try:
            mode = probe.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            if probe.parent == probe:
                return
            probe = probe.parent
            continue
        except (OSError, ValueError):
            return  # not ours to see as this user: run will tell
        if stat.S_ISDIR(mode):
            return
        if probe == directory:
            raise f.ConfigError(
                f"state.directory: {str(directory)!r} is a file, not a directory; "
                "give the path of a directory (created if missing)"
            )
        raise f.ConfigError(
            f"state.directory: {str(directory)!r} cannot be created: {str(probe)!r} is a file; "
            "give the path of a directory (created if missing)"
        )


def _check_file(path: Path, key: str, needed: bool, reader: pwd.struct_passwd | None) -> None:
    """A file key is never a directory; a ``needed`` one (read at start) exists and ``reader``
    (None: this process) can read it. An ``event_log`` may appear once jobs run."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        if needed:
            fix = MISSING_FIXES.get(key, "give the path of an existing file, or null")
            raise f.ConfigError(f"{key}: {str(path)!r} does not exist; {fix}") from None
        return
    except (OSError, ValueError) as exc:
        if reader is not None:
            return  # not ours to see as this user: the service user may, and checks at start
        raise f.ConfigError(
            f"{key}: cannot read {str(path)!r} ({getattr(exc, 'strerror', None) or exc}); "
            "make it readable by the service user"
        ) from None
    if stat.S_ISDIR(mode):
        raise f.ConfigError(f"{key}: {str(path)!r} is a directory; give the path of a file")
    why = unreadable(path, reader) if needed else None
    if why is not None:
        fix = UNREADABLE_FIXES.get(key, "make it readable by that user")
        raise f.ConfigError(f"{key}: {str(path)!r} {why}; {fix}")
