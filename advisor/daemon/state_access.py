"""Who may use the state directory: one daemon at a time, as the user that owns its files.

Two daemons on one directory (an administrator's ``run --once`` beside the service, a second
unit by mistake) each journalled every event, so a restart learned each owner session twice, and
their snapshots took the same numbers. The first to start now holds an advisory lock on
``lock`` in the directory for as long as it runs (``flock``, released by the kernel when the
process ends, however it ends); the second is refused in one line. A file there that a run as
another user left (root's ``run --once``) made the service's start fail with a traceback.
"""

from __future__ import annotations

import fcntl
import os
import pwd
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from advisor.daemon.fields import ConfigError

LOCK_NAME = "lock"


@contextmanager
def state_directory_held(directory: Path) -> Iterator[None]:
    """The directory's lock for the time of the block, and one line for a file in it this
    user may not change; ``ConfigError`` naming the holder when another process has it."""
    try:
        fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except PermissionError as exc:
        raise not_writable(exc, directory) or exc from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            raise ConfigError(
                f"state.directory: {directory} is in use by another htcondor-advisor (pid "
                f"{holder}); stop it first (systemctl stop htcondor-advisor), or give this one "
                "its own --state-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield
        except PermissionError as exc:
            raise not_writable(exc, directory) or exc from None
    finally:
        os.close(fd)  # (the lock goes with it)


def not_writable(exc: PermissionError, directory: Path) -> ConfigError | None:
    """The one line for a file of the state directory this user may not change, else None."""
    name = exc.filename
    if name is None or not Path(name).resolve().is_relative_to(directory.resolve()):
        return None
    user = pwd.getpwuid(os.geteuid()).pw_name
    return ConfigError(
        f"state.directory: {name} is not writable by {user} (a run as another user, such as "
        f"root, left it); give the directory back: chown -R {user}: {directory}"
    )
