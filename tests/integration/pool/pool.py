"""A real HTCondor 25 pool in a Debian sid chroot, for the integration tests (needs root).

Four execute machines are four ``condor_startd`` instances under one ``condor_master``, each with
its own local name, ``NETWORK_HOSTNAME`` (hence its own ``Machine``), log and execute directory:
they update the collector, get matched, claim, vacate and change state independently, exactly as
separate hosts would, which slot-level emulation (one startd, four slots) would not give (slots of
one startd share one ``Machine``, one STARTD_CRON and one update stream). Owner use is a per-startd
STARTD_CRON attribute ``OwnerActive`` read from a schedule file; IS_OWNER and PREEMPT use it, so a
running job really is evicted when its "owner" logs in.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[2]
DEFAULT_CHROOT = Path(os.environ.get("ADVISOR_CHROOT", "/var/cache/htcondor-advisor/chroot"))
DOMAIN = "advisor.test"
TEST_DIR = "/var/lib/advisor-test"
HOOK = "/usr/local/libexec/htcondor-advisor-hook"
COLLECTOR = "127.0.0.1:9618"
SECOND_SCHEDD = f"ap2@ap2.{DOMAIN}"
"""The second schedd's ``Name`` (an ``@`` in it, as a schedd's ``-local-name`` often has)."""
SECOND_SPOOL = "/var/spool/condor/ap2"
CHROOT_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}
"""Not the host's environment: importing htcondor2 sets CONDOR_CONFIG for the host side."""


def build_chroot(root: Path = DEFAULT_CHROOT) -> Path:
    """The cached chroot, built by ``build_chroot.sh`` when absent (several minutes, once)."""
    if not (root / ".advisor-ready").exists():
        subprocess.run([str(HERE / "build_chroot.sh"), str(root)], check=True)
    return root


def room_of(name: str) -> str:
    """A test machine's room (``AdvisorCluster``): pc1 and pc2 in one, the others in another."""
    return "lab-a" if name in ("pc1", "pc2") else "lab-b"


def startd_config(names: Sequence[str], hook_url: str, cron_period: int) -> str:
    """condor_config for the test pool: one master, four startds that look like four hosts."""
    lines = [
        "MOUNT_UNDER_SCRATCH =",
        "CONDOR_HOST = 127.0.0.1",
        "NETWORK_INTERFACE = 127.0.0.1",
        f"UID_DOMAIN = {DOMAIN}",
        "UPDATE_INTERVAL = 5",
        "POLLING_INTERVAL = 1",
        "NEGOTIATOR_INTERVAL = 2",
        "NEGOTIATOR_CYCLE_DELAY = 2",
        "SCHEDD_INTERVAL = 2",
        # How soon a job kept in the queue (LeaveJobInQueue) leaves once it may (default 60 s).
        "PERIODIC_EXPR_INTERVAL = 5",
        "NUM_CPUS = 1",
        "MEMORY = 1024",
        "SLOT_TYPE_1 = 100%",
        "NUM_SLOTS_TYPE_1 = 1",
        "SLOT_TYPE_1_PARTITIONABLE = False",
        f"FILESYSTEM_DOMAIN = {DOMAIN}",
        "STARTD_CRON_AUTOPUBLISH = If_Changed",
        # Owner emulation: OwnerActive from a per-machine schedule file.
        f"use FEATURE : PeriodicCronHook(STARTD_CRON, OWNER, 1, {TEST_DIR}/owner_cron.sh, "
        f"{TEST_DIR}/owner-$(NETWORK_HOSTNAME))",
        "START = (OwnerActive =!= true)",
        "IS_OWNER = (OwnerActive =?= true)",
        "PREEMPT = (OwnerActive =?= true)",
        "WANT_SUSPEND = False",
        "WANT_VACATE = False",
        "MAXJOBRETIREMENTTIME = 0",
        "KILL = True",
        "CONTINUE = True",
        "SUSPEND = False",
        # The shipped fragments (START is extended from the rule above).
        f"include : {TEST_DIR}/40-htcondor-advisor-expressions.conf",
        f"include : {TEST_DIR}/50-central-manager.conf",
        f"include : {TEST_DIR}/50-execute-point.conf",
        f"include : {TEST_DIR}/50-access-point.conf",
        f"ADVISOR_URL = {hook_url}",
        f"ADVISOR_HOOK = {HOOK}",
        f"ADVISOR_HOOK_PERIOD = {cron_period}",
        "ADVISOR_CONTROL_PERCENT = 0",  # the tests check what advice does to given jobs
        "DAEMON_LIST = MASTER COLLECTOR NEGOTIATOR SCHEDD SCHEDD_AP2 "
        + " ".join(f"STARTD_{n.upper()}" for n in names),
        # A second access point, whose clusters are numbered from 1 as the first's are.
        "SCHEDD_AP2 = $(SCHEDD)",
        "SCHEDD_AP2_ARGS = -local-name AP2",
        f"AP2.SCHEDD_NAME = {SECOND_SCHEDD}",
        f"AP2.SPOOL = {SECOND_SPOOL}",
        "AP2.SCHEDD_LOG = $(LOG)/SchedLog.ap2",
        f"AP2.SCHEDD_ADDRESS_FILE = {SECOND_SPOOL}/.schedd_address",
        f"AP2.SCHEDD_DAEMON_AD_FILE = {SECOND_SPOOL}/.schedd_classad",
        # Its shadows have no local name: they append its attempts' epoch ads to the first's
        # JOB_EPOCH_HISTORY, as on any host with two schedds (advisor/condor/epoch_owners.py).
    ]
    for n in names:
        up = n.upper()
        lines += [
            f"STARTD_{up} = $(STARTD)",
            f"STARTD_{up}_ARGS = -local-name {up}",
            f"{up}.STARTD_NAME = {n}",
            f"{up}.NETWORK_HOSTNAME = {n}.{DOMAIN}",
            f"{up}.STARTD_LOG = $(LOG)/StartLog.{n}",
            f"{up}.EXECUTE = $(EXECUTE)/{n}",
            f"{up}.STARTD_ADDRESS_FILE = $(LOG)/.startd_{n}_address",
            f'{up}.AdvisorCluster = "{room_of(n)}"',  # as a site sets it (execute-point/50)
        ]
    return "\n".join(lines) + "\n"


@dataclass
class ChrootPool:
    """Start, drive and tear down the pool; every path given to HTCondor is inside the chroot."""

    root: Path
    names: Sequence[str] = ("pc1", "pc2", "pc3", "pc4")
    hook_url: str = "http://127.0.0.1:9"
    cron_period: int = 2

    def host_path(self, inside: str) -> Path:
        return self.root / inside.lstrip("/")

    def run(self, *argv: str, user: str | None = None, check: bool = True) -> str:
        cmd = ["chroot"]
        if user:
            cmd.append(f"--userspec={user}:{user}")
        out = subprocess.run(
            [*cmd, str(self.root), *argv], capture_output=True, text=True, env=CHROOT_ENV
        )
        if check and out.returncode:
            raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}")
        return out.stdout

    def start(self) -> None:
        """Fresh state (empty queue, history and logs), then ``condor_master``."""
        self._mount()
        for d in ("/var/spool/condor", "/var/log/condor", "/var/lib/condor/execute", TEST_DIR):
            shutil.rmtree(self.host_path(d), ignore_errors=True)
        test_dir = self.host_path(TEST_DIR)
        test_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(HERE / "owner_cron.sh", test_dir / "owner_cron.sh")
        deploy = PROJECT / "deploy"
        shutil.copy(deploy / "common/40-htcondor-advisor-expressions.conf", test_dir)
        shutil.copy(
            deploy / "central-manager/50-htcondor-advisor-central-manager.conf",
            test_dir / "50-central-manager.conf",
        )
        shutil.copy(
            deploy / "execute-point/50-htcondor-advisor-execute-point.conf",
            test_dir / "50-execute-point.conf",
        )
        shutil.copy(
            deploy / "access-point/50-htcondor-advisor-access-point.conf",
            test_dir / "50-access-point.conf",
        )
        hook = self.host_path(HOOK)
        hook.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(deploy / "hook/htcondor-advisor-hook", hook)
        for n in self.names:
            self.set_owner_schedule(n, [])
        hosts = "127.0.0.1 localhost\n127.0.0.1 " + os.uname().nodename + "\n"
        hosts += "".join(f"127.0.0.1 {n}.{DOMAIN} {n}\n" for n in self.names)
        self.host_path("/etc/hosts").write_text(hosts)
        conf = startd_config(self.names, self.hook_url, self.cron_period)
        self.host_path("/etc/condor/config.d/99-advisor-test-pool.conf").write_text(conf)
        execute = [f"/var/lib/condor/execute/{n}" for n in self.names]
        dirs = ("/run/condor", "/var/lock/condor", "/var/log/condor", "/var/spool/condor")
        for d in (*dirs, SECOND_SPOOL, "/var/lib/condor/execute", *execute):
            self.host_path(d).mkdir(parents=True, exist_ok=True)
            self.run("chown", "condor:condor", d)
        self.run("sh", "-c", "id tester >/dev/null 2>&1 || useradd -m tester")
        self.run("chmod", "1777", TEST_DIR)
        self.run("condor_master")

    def set_owner_schedule(self, machine: str, sessions: Sequence[tuple[float, float]]) -> None:
        """Owner sessions (login, logout) for ``machine``; the cron job reads them each second."""
        path = self.host_path(f"{TEST_DIR}/owner-{machine}.{DOMAIN}")
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(f"{int(a)} {int(b)}\n" for a, b in sessions))
        tmp.replace(path)

    def on_central_manager(self, *argv: str, user: str | None = None) -> str:
        """A command where the collector and schedd run (here: the one host)."""
        return self.run(*argv, user=user)

    def token(self, identity: str, *authz: str) -> str:
        args = ["condor_token_create", "-identity", f"{identity}@{DOMAIN}"]
        for a in authz:
            args += ["-authz", a]
        return self.on_central_manager(*args).strip()

    def submit(self, description: str, schedd: str = "") -> str:
        """condor_submit as the unprivileged user ``tester`` (to the schedd named, else the
        first); returns its output."""
        path = f"{TEST_DIR}/job-{time.monotonic_ns()}.sub"
        self.host_path(path).write_text(description)
        name = f"-name {schedd} " if schedd else ""
        deadline = time.monotonic() + 30
        while True:  # the schedd writes its address file a little after advertising itself
            try:
                cmd = f"cd {TEST_DIR} && condor_submit {name}{path}"
                return self.on_central_manager("sh", "-c", cmd, user="tester")
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def stop(self) -> None:
        """Stop every daemon (fast shutdown, then kill what is left) and remove the mounts."""
        self.run("condor_off", "-fast", "-master", check=False)
        self._clear()

    def _clear(self) -> None:
        """Wait up to 30 s for the chroot's processes to end, kill the rest, unmount."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self._condor_pids():
            time.sleep(0.5)
        for pid in self._condor_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        for mount in self.mounted():
            subprocess.run(["umount", "-l", str(mount)], check=False)

    def mounted(self) -> list[Path]:
        """Mount points inside the chroot, deepest first (also those of an earlier run)."""
        points = []
        for line in Path("/proc/self/mounts").read_text().splitlines():
            point = Path(line.split()[1])
            if point == self.root or self.root in point.parents:
                points.append(point)
        return sorted(set(points), key=lambda p: len(p.parts), reverse=True)

    def _condor_pids(self) -> list[int]:
        """Processes whose root is this chroot (our daemons and jobs, nothing else)."""
        pids = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if Path(os.readlink(proc / "root")) == self.root:
                    pids.append(int(proc.name))
            except OSError:
                continue
        return pids

    def share(self, path: Path) -> None:
        """``path`` of this machine at the same path in the chroot, read-only: what a shared
        filesystem gives every host of a real pool. Its parent directories become traversable
        (a chroot's ``/root`` is private) so jobs running as ``tester`` reach it."""
        inside = self.host_path(str(path))
        if os.path.ismount(inside):
            return
        if path.is_dir():
            inside.mkdir(parents=True, exist_ok=True)
        else:
            inside.parent.mkdir(parents=True, exist_ok=True)
            inside.touch()
        for parent in inside.parents:
            if parent == self.root or self.root not in parent.parents:
                break
            parent.chmod(parent.stat().st_mode | 0o011)
        subprocess.run(["mount", "--bind", str(path), str(inside)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(inside)], check=True)

    def _mount(self) -> None:
        for kind, target in (("proc", "/proc"), ("sysfs", "/sys")):
            path = self.host_path(target)
            if not os.path.ismount(path):
                subprocess.run(["mount", "-t", kind, kind, str(path)], check=True)
        dev = self.host_path("/dev")
        if not os.path.ismount(dev):
            subprocess.run(["mount", "--rbind", "/dev", str(dev)], check=True)
