"""Hold many idle connections open against the running twin and measure what a hook sees.

``bench-daemon idle-connections``: start ``htcondor-advisor run`` as a child, open N TCP
connections that never send a byte (one reopened as soon as the daemon closes it, so N stay
open for the whole hold), and meanwhile time sequential ``GET /advice/MACHINE`` and
``GET /healthz`` requests, one connection each, as the STARTD_CRON hooks make them. Also sampled:
the daemon's threads and descriptors (``/proc/PID``) and the snapshots it wrote during the hold.
Loopback only; every loop is bounded by the hold.
"""

from __future__ import annotations

import http.client
import os
import re
import resource
import selectors
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import numpy as np

from advisor.daemon.http_server import raise_fd_limit
from advisor.daemon.state_store import StateStore, read_snapshot
from advisor.lab.daemon_process import DaemonProcess

LIMITS = re.compile(r"at most \d+ connections, descriptor limit \d+")


@dataclass
class Figures:
    """Start, peak and end of one of the daemon's counts."""

    start: int = 0
    peak: int = 0
    end: int = 0

    def see(self, value: int) -> None:
        self.peak = max(self.peak, value)


@dataclass
class HoldReport:
    connections: int
    hold_s: float
    machine: str = ""
    limits: str = "?"
    reopened: int = 0
    latency_ms: dict[str, list[float]] = field(default_factory=dict)
    failures: int = 0
    threads: Figures = field(default_factory=Figures)
    fds: Figures = field(default_factory=Figures)
    snapshots: int = 0
    alive_after: bool = False
    exit_code: int | None = None


def threads_and_fds(pid: int) -> tuple[int, int]:
    with open(f"/proc/{pid}/status") as fh:
        threads = next(int(line.split()[1]) for line in fh if line.startswith("Threads:"))
    return threads, len(os.listdir(f"/proc/{pid}/fd"))


def snapshot_seq(state: Path) -> int:
    """The sequence number of the newest snapshot (they are numbered from 1; old ones pruned)."""
    found = StateStore(state).snapshots()
    return found[0][0] if found else 0


class Holder:
    """``count`` connections that say nothing; ``refill`` replaces those the server closed."""

    def __init__(self, address: tuple[str, int], count: int) -> None:
        self.address = address
        self.selector = selectors.DefaultSelector()
        self.reopened = 0
        for _ in range(count):
            self._open()

    def _open(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)  # never wait on a full listen queue: the timing loop goes on
        sock.connect_ex(self.address)
        self.selector.register(sock, selectors.EVENT_READ)  # readable: closed, reset, refused

    def refill(self) -> None:
        for key, _ in self.selector.select(0):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            self.selector.unregister(sock)
            sock.close()
            self._open()
            self.reopened += 1

    def close(self) -> None:
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        self.selector.close()


def timed_get(address: tuple[str, int], path: str) -> float | None:
    """Milliseconds for one request on a fresh connection; None when it failed."""
    began = time.perf_counter()
    conn = http.client.HTTPConnection(*address, timeout=5)
    try:
        conn.request("GET", path)
        reply = conn.getresponse()
        reply.read()
        ok = reply.status == 200
    except OSError:
        ok = False
    finally:
        conn.close()
    return (time.perf_counter() - began) * 1000 if ok else None


def _first_machine(state: Path) -> str:
    newest = StateStore(state).snapshots()[0][1]
    return next(iter(read_snapshot(newest)["state"]["recent"]), "unknown.example.org")


def hold_idle_connections(
    twin_args: list[str],
    work: Path,
    connections: int,
    hold_s: float,
    pause_s: float = 0.02,
    fd_limit: int | None = None,
) -> HoldReport:
    """``twin_args``: pool and pace arguments of ``htcondor-advisor run``; ``fd_limit``: the
    daemon's RLIMIT_NOFILE (soft and hard) instead of the one it inherits."""
    if raise_fd_limit() < connections + 256:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        raise RuntimeError(f"this process may open {soft} files, too few for {connections}")
    report = HoldReport(connections, hold_s)
    state = work / "state"
    daemon = DaemonProcess([*twin_args, "--state-dir", str(state), "--no-progress"])
    pid = daemon.proc.pid
    if fd_limit is not None:  # before the daemon reads it: it only starts importing now
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (fd_limit, fd_limit))
    holder: Holder | None = None
    try:
        daemon.wait_for(lambda: daemon.address and StateStore(state).snapshots(), timeout=300)
        assert daemon.address is not None
        host, port = daemon.address.rsplit(":", 1)
        address = (host, int(port))
        limits = LIMITS.search(daemon.log())
        report.limits = limits.group(0) if limits else "?"
        report.machine = _first_machine(state)
        paths = {"/advice/MACHINE": f"/advice/{quote(report.machine, safe='')}"}
        paths["/healthz"] = "/healthz"
        report.latency_ms = {label: [] for label in paths}
        threads, fds = threads_and_fds(pid)
        report.threads, report.fds = Figures(threads, threads), Figures(fds, fds)
        first_seq = snapshot_seq(state)
        holder = Holder(address, connections)
        end = time.monotonic() + hold_s
        while time.monotonic() < end:
            for label, path in paths.items():
                ms = timed_get(address, path)
                if ms is None:
                    report.failures += 1
                else:
                    report.latency_ms[label].append(ms)
            holder.refill()
            threads, fds = threads_and_fds(pid)
            report.threads.see(threads)
            report.fds.see(fds)
            time.sleep(pause_s)
        report.snapshots = snapshot_seq(state) - first_seq
        report.reopened = holder.reopened
        holder.close()
        holder = None
        time.sleep(2.0)  # the daemon sees the closes
        report.threads.end, report.fds.end = threads_and_fds(pid)
        report.alive_after = daemon.proc.poll() is None
    finally:
        if holder is not None:
            holder.close()
        if daemon.proc.poll() is None:
            daemon.proc.send_signal(signal.SIGTERM)
        report.exit_code = daemon.finish(timeout=120)
    return report


def _quantiles(values: list[float]) -> str:
    if not values:
        return "no answers"
    p50, p99 = np.percentile(values, [50, 99])
    return f"p50 {p50:.2f}  p99 {p99:.2f}  max {max(values):.2f}  ({len(values)} requests)"


def print_report(report: HoldReport, twin_args: list[str]) -> None:
    rows = [
        ("daemon", " ".join(twin_args)),
        ("endpoint", report.limits),
        ("idle connections held", f"{report.connections} for {report.hold_s:g} s"),
        ("reopened after a close", report.reopened),
    ]
    rows += [(f"latency ms {label}", _quantiles(v)) for label, v in report.latency_ms.items()]
    rows += [
        ("failed requests", report.failures),
        ("daemon threads", _figures(report.threads)),
        ("daemon descriptors", _figures(report.fds)),
        ("snapshots in the hold", report.snapshots),
        ("daemon after the hold", "running" if report.alive_after else "DEAD"),
        ("exit status (SIGTERM)", report.exit_code),
    ]
    for label, value in rows:
        print(f"{label:<32}{value}")


def _figures(f: Figures) -> str:
    return f"start {f.start}  peak {f.peak}  end {f.end} (2 s after the release)"
