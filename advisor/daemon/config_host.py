"""Checks of a checked configuration against this machine: listen address, paths, files.

Kept apart from the key checks because they look at the host (DNS, the file system) rather than
at the document; ``check-config`` runs them without changing anything, ``run`` also prepares.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.daemon import fields as f
from advisor.daemon.state_store import private_directory

if TYPE_CHECKING:
    from advisor.daemon.config import DaemonConfig


def check_host(config: DaemonConfig, starting: bool = False) -> None:
    """Check the paths and the listen address against this machine: ``check-config`` and every
    reload without changing anything; ``run`` (``starting``) also creates the state directory
    0700 and checks the service user can write it and read the token file."""
    check_listen(config.publish["listen"])
    directory = config.state["directory"]
    if starting:
        prepare_state_directory(directory)
    else:
        _check_directory_path(directory)
    pool = config.pool
    _check_file(pool.get("token_file"), "pool.token_file", needed=True, starting=starting)
    _check_file(pool.get("scenario_config"), "pool.scenario_config", needed=True, starting=starting)
    _check_file(pool.get("event_log"), "pool.event_log", needed=False, starting=starting)


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


def listen_error(listen: tuple[str, int], exc: OSError) -> f.ConfigError | None:
    """The ConfigError for an endpoint that could not bind ``publish.listen`` (None: ``exc`` is
    no bind failure). Socket errors carry no file name, which tells them from file errors."""
    host, port = listen
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(exc, socket.gaierror):
        return f.ConfigError(
            f"publish.listen: host {host!r} does not resolve ({exc.strerror}); "
            "use an address of this machine such as 127.0.0.1"
        )
    fix = BIND_FIXES.get(exc.errno or 0)
    if fix is None or exc.filename is not None:
        return None
    return f.ConfigError(f"publish.listen: {shown} {fix}")


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


def _check_file(path: Path | None, key: str, needed: bool, starting: bool) -> None:
    """A file key is never a directory; at start a ``needed`` one (read then) exists and can be
    read. (``check-config`` may run before the file is put in place, or as another user.)"""
    if path is None:
        return
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        if needed and starting:
            raise f.ConfigError(
                f"{key}: {str(path)!r} does not exist; give the path of an existing file, or null"
            ) from None
        return
    except (OSError, ValueError) as exc:
        if starting:
            raise f.ConfigError(
                f"{key}: cannot read {str(path)!r} ({getattr(exc, 'strerror', None) or exc}); "
                "make it readable by the service user"
            ) from None
        return  # check-config may run as another user than the service
    if stat.S_ISDIR(mode):
        raise f.ConfigError(f"{key}: {str(path)!r} is a directory; give the path of a file")
    if starting and needed and not os.access(path, os.R_OK):
        raise f.ConfigError(
            f"{key}: cannot read {str(path)!r} (permission denied); "
            "make it readable by the service user"
        )
