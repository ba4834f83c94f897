"""One daemon per state directory, and one line for a file in it that another user left
(advisor/daemon/state_access.py): two daemons on one directory journalled every event twice,
and a root-owned file made the service's start end in a traceback."""

from __future__ import annotations

import io
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.daemon.fields import ConfigError
from advisor.daemon.state_access import LOCK_NAME, state_directory_held

TWIN = ["--pool", "sim:campus", "--days", "1", "--scale", "0.03", "--no-progress"]
HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from advisor.daemon.state_access import state_directory_held\n"
    "with state_directory_held(Path(sys.argv[1])):\n"
    "    print('held', flush=True)\n"
    "    time.sleep(120)\n"
)


def run_once(state: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "advisor.cli", "run", "--state-dir", str(state), *TWIN]
    return subprocess.run([*argv, "--once"], capture_output=True, text=True, timeout=300)


def test_a_second_daemon_on_the_same_state_directory_is_refused(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        refused = run_once(tmp_path)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.splitlines() == [
            f"htcondor-advisor run: error: state.directory: {tmp_path} is in use by another "
            f"htcondor-advisor (pid {holder.pid}); stop it first (systemctl stop "
            "htcondor-advisor), or give this one its own --state-dir"
        ]
        assert not list(tmp_path.glob("*.json*"))  # nothing written by the refused one
    finally:
        holder.kill()
        holder.wait()
    done = run_once(tmp_path)  # the lock goes with the process that held it
    assert done.returncode == 0, done.stderr
    with state_directory_held(tmp_path):  # and with the block that held it
        pass


@pytest.fixture
def service_dir() -> Iterator[tuple[Path, pwd.struct_passwd]]:
    """A state directory of the user nobody, where only root may create files (needs root)."""
    if os.geteuid() != 0:
        pytest.skip("files of other owners need root")
    user = pwd.getpwnam("nobody")
    name = tempfile.mkdtemp(prefix="advisor-state-")
    os.chown(name, user.pw_uid, user.pw_gid)
    yield Path(name), user
    shutil.rmtree(name)


def held_as(user: pwd.struct_passwd, directory: Path) -> str:
    """What ``state_directory_held`` says to ``user`` (a forked child that drops root)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        out = io.StringIO()
        try:
            os.setgroups([])
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)
            with state_directory_held(directory):
                out.write("held")
        except ConfigError as exc:
            out.write(str(exc))
        except BaseException as exc:
            out.write(repr(exc))
        finally:
            os.write(write, out.getvalue().encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        said = pipe.read()
    os.waitpid(pid, 0)
    return said


def test_a_file_another_user_left_is_named_with_the_fix(
    service_dir: tuple[Path, pwd.struct_passwd],
) -> None:
    directory, user = service_dir
    assert held_as(user, directory) == "held"
    lock = directory / LOCK_NAME
    os.chown(lock, 0, 0)  # as a run as root would have left it
    assert held_as(user, directory) == (
        f"state.directory: {lock} is not writable by nobody (a run as another user, such as "
        f"root, left it); give the directory back: chown -R nobody: {directory}"
    )
