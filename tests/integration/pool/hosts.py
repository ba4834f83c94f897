"""A real HTCondor 25 pool of several hosts (needs root): a central manager (collector,
negotiator, schedd), execute points and, started by the test that needs it, an access point of
its own (a schedd), each a ``condor_master`` in its own network namespace
with its own address (``network.py``), all sharing the Debian sid chroot of ``pool.py`` for their
binaries and the pool's signing key, each with its own configuration and local directory.

Each host is configured as a site would configure it: ``00-pool.conf`` is the pool as it was
before the advisor (roles, addresses, one partitionable slot of two cores per execute point, a
desktop owner emulated as in ``pool.py``, short intervals for a test), then the files of
``deploy/`` **as shipped** for the host's role, then the one local file the deploy README tells an
administrator to write.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from integration.pool import network
from integration.pool.pool import CHROOT_ENV, DOMAIN, HERE, PROJECT, TEST_DIR, ChrootPool

CM = "cm"
EXECUTE_POINTS = ("ep1", "ep2")
ACCESS_POINT = "ap"
ADDRESSES = {
    host: f"{network.SUBNET}.{10 + i}" for i, host in enumerate((CM, *EXECUTE_POINTS, ACCESS_POINT))
}
COLLECTOR = f"{ADDRESSES[CM]}:9618"
ADVISOR_PORT = 9681
"""The port ``deploy/execute-point`` asks the advisor on (``publish.listen`` of the example)."""
CORES = 2
HOOK = "/usr/libexec/condor/htcondor-advisor-hook"
"""``$(LIBEXEC)/htcondor-advisor-hook``, where deploy/README.md puts the hook."""

SHIPPED = {
    CM: [
        "common/40-htcondor-advisor-expressions.conf",
        "central-manager/50-htcondor-advisor-central-manager.conf",
        "power/20-advisor-rooster.config",
        # the schedd runs here; the advisor edits jobs (each role's file has a name of its own)
        "access-point/50-htcondor-advisor-access-point.conf",
    ],
    "ep": [
        "common/40-htcondor-advisor-expressions.conf",
        "execute-point/50-htcondor-advisor-execute-point.conf",
        "power/10-advisor-hibernate.config",
    ],
    ACCESS_POINT: [
        "common/40-htcondor-advisor-expressions.conf",
        "access-point/50-htcondor-advisor-access-point.conf",
    ],
}

BASE = """RELEASE_DIR = /usr
LOCAL_DIR = /var/lib/advisor-hosts/{host}
RUN = $(LOCAL_DIR)/run
LOG = $(LOCAL_DIR)/log
LOCK = $(LOCAL_DIR)/lock
SPOOL = $(LOCAL_DIR)/spool
EXECUTE = $(LOCAL_DIR)/execute
CRED_STORE_DIR = $(LOCAL_DIR)/cred_dir
ETC = /etc/condor
BIN = $(RELEASE_DIR)/bin
LIB = $(RELEASE_DIR)/lib/condor
SBIN = $(RELEASE_DIR)/sbin
LIBEXEC = $(RELEASE_DIR)/libexec/condor
SHARE = $(RELEASE_DIR)/share/condor
LOCAL_CONFIG_DIR = /etc/advisor-hosts/{host}/config.d
"""

POOL = """use security:recommended
CONDOR_HOST = {cm}
NETWORK_INTERFACE = {address}
NETWORK_HOSTNAME = {host}.{domain}
UID_DOMAIN = {domain}
FILESYSTEM_DOMAIN = {domain}
MOUNT_UNDER_SCRATCH =
UPDATE_INTERVAL = 5
POLLING_INTERVAL = 1
RUNBENCHMARKS = 0
"""

CENTRAL_MANAGER = """use ROLE : CentralManager
use ROLE : Submit
NEGOTIATOR_INTERVAL = 2
NEGOTIATOR_CYCLE_DELAY = 2
SCHEDD_INTERVAL = 2
"""

ACCESS_POINT_ROLE = """use ROLE : Submit
SCHEDD_INTERVAL = 2
"""

EXECUTE_POINT = f"""use ROLE : Execute
NUM_CPUS = {CORES}
MEMORY = 2048
STARTD_CRON_AUTOPUBLISH = If_Changed
use FEATURE : PeriodicCronHook(STARTD_CRON, OWNER, 1, {TEST_DIR}/owner_cron.sh, \
{TEST_DIR}/owner-$(NETWORK_HOSTNAME))
START = (OwnerActive =!= true)
IS_OWNER = (OwnerActive =?= true)
PREEMPT = (OwnerActive =?= true)
WANT_SUSPEND = False
WANT_VACATE = False
MAXJOBRETIREMENTTIME = 0
KILL = True
CONTINUE = True
SUSPEND = False
"""

CONTROL_OFF = "ADVISOR_CONTROL_PERCENT = 0\n"
"""Every host's 60-htcondor-advisor-local.conf: no control group, as these tests check what the
advice does to given jobs (the split has its own tests: classad2, the twin, and one test here
that turns it on)."""
LOCAL = CONTROL_OFF + "ADVISOR_HOOK_PERIOD = 2\n"
"""The execute points' local file also asks every 2 s (a test's patience)."""


@dataclass
class HostsPool(ChrootPool):
    """Start, drive and tear down the hosts; ``run`` runs a command on one of them."""

    hosts: Sequence[str] = (CM, *EXECUTE_POINTS)
    names: Sequence[str] = EXECUTE_POINTS
    started: list[str] = field(default_factory=list)
    shared: Sequence[Path] = ()
    """Paths of this machine every host sees (``share``): mounted before any daemon starts, as
    each host's namespace keeps the mounts it began with."""

    def machine(self, host: str) -> str:
        return f"{host}.{DOMAIN}"

    def start(self) -> None:
        self._mount()
        for path in self.shared:
            self.share(path)
        network.create(ADDRESSES)
        shutil.rmtree(self.host_path("/var/lib/advisor-hosts"), ignore_errors=True)
        shutil.rmtree(self.host_path("/etc/advisor-hosts"), ignore_errors=True)
        shutil.rmtree(self.host_path(TEST_DIR), ignore_errors=True)
        test_dir = self.host_path(TEST_DIR)
        test_dir.mkdir(parents=True)
        shutil.copy(HERE / "owner_cron.sh", test_dir / "owner_cron.sh")
        hook = self.host_path(HOOK)
        hook.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT / "deploy/hook/htcondor-advisor-hook", hook)
        # the machine's own name too: every host shares it (one UTS namespace), and a lookup
        # that reached for DNS would wait out its timeouts (no resolver on the bridge)
        hosts = f"127.0.0.1 localhost {os.uname().nodename}\n"
        hosts += "".join(f"{a} {h}.{DOMAIN} {h}\n" for h, a in ADDRESSES.items())
        self.host_path("/etc/hosts").write_text(hosts)
        for host in self.hosts:
            self._configure(host)
        for name in self.names:
            self.set_owner_schedule(name, [])
        self.run(CM, "sh", "-c", "id tester >/dev/null 2>&1 || useradd -m tester")
        self.run(CM, "chmod", "1777", TEST_DIR)
        for host in self.hosts:
            self.run(host, "condor_master")
            self.started.append(host)

    def _configure(self, host: str) -> None:
        etc = self.host_path(f"/etc/advisor-hosts/{host}")
        (etc / "config.d").mkdir(parents=True)
        (etc / "condor_config").write_text(BASE.format(host=host))
        role = host if host in (CM, ACCESS_POINT) else "ep"
        pool = POOL.format(cm=ADDRESSES[CM], address=ADDRESSES[host], host=host, domain=DOMAIN)
        pool += {CM: CENTRAL_MANAGER, ACCESS_POINT: ACCESS_POINT_ROLE, "ep": EXECUTE_POINT}[role]
        (etc / "config.d/00-pool.conf").write_text(pool)
        for shipped in SHIPPED[role]:
            shutil.copy(PROJECT / "deploy" / shipped, etc / "config.d")
        local_conf = LOCAL if role == "ep" else CONTROL_OFF
        (etc / "config.d/60-htcondor-advisor-local.conf").write_text(local_conf)
        local = f"/var/lib/advisor-hosts/{host}"
        for d in ("", "/run", "/log", "/lock", "/spool", "/execute", "/cred_dir"):
            self.host_path(local + d).mkdir(parents=True, exist_ok=True)
            self.run(host, "chown", "condor:condor", local + d)
        self.run(host, "chmod", "0700", f"{local}/cred_dir")

    def command(self, host: str, argv: Sequence[str], user: str | None = None) -> list[str]:
        """``argv`` in ``host``'s namespace, in the chroot, with that host's configuration."""
        chroot = ["chroot"] + ([f"--userspec={user}:{user}"] if user else [])
        env = [f"{k}={v}" for k, v in CHROOT_ENV.items()]
        env.append(f"CONDOR_CONFIG=/etc/advisor-hosts/{host}/condor_config")
        return [*network.inside(host), *chroot, str(self.root), "env", "-i", *env, *argv]

    def run(self, host: str, *argv: str, user: str | None = None, check: bool = True) -> str:  # type: ignore[override]
        cmd = self.command(host, argv, user)
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if check and out.returncode:
            raise RuntimeError(
                f"{host}: {' '.join(argv)} failed ({out.returncode}): {out.stderr.strip()}"
            )
        return out.stdout

    def on_central_manager(self, *argv: str, user: str | None = None) -> str:
        return self.run(CM, *argv, user=user)

    def start_host(self, host: str) -> None:
        """A host not started with the pool (the access point), configured and started."""
        self._configure(host)
        self.run(host, "condor_master")
        self.started.append(host)

    def stop_host(self, host: str) -> None:
        self.run(host, "condor_off", "-fast", "-master", check=False)
        self.started.remove(host)

    def submit_at(self, host: str, description: str) -> str:
        """condor_submit as ``tester`` on ``host`` (its own schedd); returns its output."""
        path = f"{TEST_DIR}/job-{time.monotonic_ns()}.sub"
        self.host_path(path).write_text(description)
        return self.run(host, "sh", "-c", f"cd {TEST_DIR} && condor_submit {path}", user="tester")

    def log(self, host: str, name: str) -> str:
        path = self.host_path(f"/var/lib/advisor-hosts/{host}/log/{name}")
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        """Stop the masters this object started (fast), kill what is left in the chroot (also
        an interrupted run's), remove the network and the mounts."""
        for host in self.started:
            self.run(host, "condor_off", "-fast", "-master", check=False)
        self.started.clear()
        self._clear()
        network.destroy(ADDRESSES)
