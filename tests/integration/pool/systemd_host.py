"""This machine's own operating system booted under its own systemd, in new PID, mount and cgroup
namespaces: a central manager on which a test installs the daemon as the README says and runs it
with the shipped unit, its sandbox and all.

It keeps this machine's network namespace, so the daemon reaches the test pool's collector on
loopback and the pool's hooks reach the daemon. Its writes go to a tmpfs overlay and vanish with
it; its cgroups are a subtree of this machine's cgroup2 hierarchy, removed at shutdown.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from integration.pool.waiting import wait_for

BOOT = Path(__file__).resolve().parent / "boot_systemd.sh"
SYSTEMD = Path("/lib/systemd/systemd")
CLEAN_ENV = ["env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LANG=C.UTF-8"]
"""A root shell's environment on a fresh host, not this test's (its venv, its CI variables)."""


def cgroup2_root() -> Path | None:
    """Where this machine's cgroup2 hierarchy is mounted (``/sys/fs/cgroup/unified``, hybrid)."""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if fields[2] == "cgroup2":
            return Path(fields[1])
    return None


def lacking() -> str | None:
    """What this machine lacks to boot a systemd host, or None."""
    if os.geteuid() != 0:
        return "root"
    for tool in ("unshare", "nsenter"):
        if shutil.which(tool) is None:
            return tool
    if not SYSTEMD.exists():
        return str(SYSTEMD)
    if cgroup2_root() is None:
        return "a cgroup2 hierarchy"
    return None


def _child_of(parent: int) -> int | None:
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                    return int(proc.name)
    return None


@dataclass
class SystemdHost:
    unshare: subprocess.Popen[bytes]
    cgroup: Path
    pid: int = 0
    """systemd's process id as this machine sees it (1 inside)."""

    @classmethod
    def boot(cls, directory: Path) -> SystemdHost:
        """Boot to ``basic.target``; ``directory`` keeps the boot's console output."""
        root = cgroup2_root()
        assert root is not None, lacking()
        cgroup = root / f"advisor-test-{os.getpid()}-{time.monotonic_ns()}"
        cgroup.mkdir()
        layers = directory / "layers"
        layers.mkdir()
        into = f"echo $$ > {cgroup}/cgroup.procs"
        enter = f'{into} && exec unshare --pid --fork --mount --cgroup "$@"'
        with (directory / "boot.log").open("wb") as log:
            proc = subprocess.Popen(
                ["sh", "-c", enter, "sh", str(BOOT), str(layers)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        host = cls(proc, cgroup)
        try:
            boot_log = (directory / "boot.log").read_text
            host.pid = wait_for(lambda: _child_of(proc.pid), 30, "systemd to start", 0.5, boot_log)

            def booted() -> bool:
                state = host.run("systemctl is-system-running", check=False).stdout.strip()
                return state in ("running", "degraded")

            wait_for(booted, 60, "systemd to finish booting")
        except BaseException:
            host.shutdown()
            raise
        return host

    def run(self, script: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``bash -c script`` as root on the host, with a fresh root shell's environment."""
        enter = ["nsenter", "-t", str(self.pid), "-m", "-p", "-C", "-r", "-w"]
        out = subprocess.run(
            [*enter, *CLEAN_ENV, "bash", "-c", script], capture_output=True, text=True, timeout=300
        )
        if check and out.returncode:
            raise RuntimeError(f"{script!r} failed ({out.returncode}):\n{out.stdout}{out.stderr}")
        return out

    def path(self, inside: str) -> Path:
        """A path of the host's filesystem, as this machine reaches it."""
        return Path(f"/proc/{self.pid}/root") / inside.lstrip("/")

    def show(self, unit: str, *properties: str) -> dict[str, str]:
        """``systemctl show`` of ``unit``'s ``properties``."""
        out = self.run(f"systemctl show {unit} -p {','.join(properties)}").stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def journal(self, unit: str) -> str:
        return self.run(f"journalctl -u {unit} --no-pager -o cat").stdout

    def shutdown(self) -> None:
        """Kill everything in it (its PID 1 first), then remove its cgroups."""
        if self.pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, 9)
        self.unshare.kill()
        self.unshare.wait(30)

        def removed() -> bool:
            for path in sorted(self.cgroup.rglob("*"), key=lambda p: len(p.parts), reverse=True):
                if path.is_dir():
                    with contextlib.suppress(OSError):
                        path.rmdir()
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()
            return not self.cgroup.exists()

        wait_for(removed, 30, f"{self.cgroup} to empty")
