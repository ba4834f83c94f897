"""Whether the service user can read a file, decided before the service runs.

``check-config`` often runs as root while ``systemd/htcondor-advisor.service`` runs the daemon as
``htcondor-advisor``, and root reads everything: so when that user exists and is not the one
checking, the answer comes from the owner, group and mode bits of the file and of each directory
above it, against that user's uid and groups. ACLs and the unit's own sandbox are not seen.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path

SERVICE_USER = "htcondor-advisor"
"""``User=`` of ``systemd/htcondor-advisor.service``."""


def service_account() -> pwd.struct_passwd | None:
    """The unit's user when it exists here and is not who runs this check (None: the question is
    about the current user, as when the daemon itself checks)."""
    try:
        account = pwd.getpwnam(SERVICE_USER)
    except KeyError:
        return None
    return None if account.pw_uid == os.geteuid() else account


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _bits(st: os.stat_result) -> str:
    """``root:root 0600``: who owns it and how it may be used."""
    return f"{user_name(st.st_uid)}:{_group_name(st.st_gid)} {stat.S_IMODE(st.st_mode):04o}"


def _allows(st: os.stat_result, uid: int, groups: set[int], owner_bit: int) -> bool:
    """The owner's bit for the owner, else the group's for a member, else the others' (a class
    that matches decides alone, as the kernel does)."""
    if st.st_uid == uid:
        return bool(st.st_mode & owner_bit)
    if st.st_gid in groups:
        return bool(st.st_mode & (owner_bit >> 3))
    return bool(st.st_mode & (owner_bit >> 6))


def unreadable(path: Path, account: pwd.struct_passwd | None) -> str | None:
    """Why ``account`` (None: this process) cannot read the existing file ``path``, as the end of
    a one-line message; None when it can, or when this process cannot see enough to tell."""
    if account is None:
        if os.access(path, os.R_OK):
            return None
        try:
            bits = f" ({_bits(path.stat())})"
        except OSError:
            bits = ""
        return f"is not readable by user {user_name(os.geteuid())}{bits}"
    if account.pw_uid == 0:
        return None
    groups = set(os.getgrouplist(account.pw_name, account.pw_gid))
    try:
        real = path.resolve(strict=True)
        for directory in reversed(real.parents):
            st = directory.stat()
            if not _allows(st, account.pw_uid, groups, stat.S_IXUSR):
                return (
                    f"is not readable by user {account.pw_name}: directory {str(directory)!r} "
                    f"({_bits(st)}) does not let it through"
                )
        st = real.stat()
    except (OSError, RuntimeError):
        return None  # not ours to see as this user: the daemon checks again at start
    if _allows(st, account.pw_uid, groups, stat.S_IRUSR):
        return None
    return f"is not readable by user {account.pw_name} ({_bits(st)})"
