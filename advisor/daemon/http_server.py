"""The advice endpoint's server: one event-loop thread for every socket, a few workers to answer.

Every machine's hook connects, sends one tiny GET and reads a few lines, so the server must not
be starved by clients that connect and say nothing. One thread (``http``) accepts, reads, times
out and writes every connection through ``selectors`` (epoll); a complete request goes to
``WORKERS`` threads (``http-worker-N``) that call ``Endpoint.answer``, so a slow answer
(``/explain`` waits for the policy host's lock during a cycle) never stalls the loop. Threads are
therefore 1 + ``WORKERS`` whatever the number of clients, and descriptors at most the connection
cap (see ``AdviceServer``) plus four. What each connection goes through is in
``advisor.daemon.http_connection``; what each path answers in ``advisor.daemon.http_endpoint``.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import queue
import resource
import selectors
import socket
import threading
import time
from collections import Counter, deque

from advisor.daemon.http_connection import ANSWERING, Connection, Connections, response
from advisor.daemon.http_endpoint import TEXT, Endpoint

log = logging.getLogger("htcondor_advisor.http")

WAKE = object()  # selector key data of the workers' wake-up socket


def raise_fd_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; the soft limit now in force.

    Under systemd the unit's ``LimitNOFILE`` sets both and this changes nothing. Where a seccomp
    filter denies prlimit64 (older systemd versions put it in ``@resources``), even reading the
    limit fails, and the common default soft limit, 1024, is assumed.
    """
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except OSError:
        return 1024
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20  # Linux's default nr_open
    if soft == resource.RLIM_INFINITY or soft >= target:
        return target if soft == resource.RLIM_INFINITY else soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (OSError, ValueError):
        return soft
    return target


def open_descriptors() -> int:
    """Descriptors this process holds (3 when /proc cannot tell)."""
    try:
        return len(os.listdir("/proc/self/fd")) - 1  # less the one listdir itself held
    except OSError:
        return 3


def connection_cap(wanted: int, soft_limit: int, in_use: int, reserve: int) -> int:
    """Connections that leave ``reserve`` descriptors free (half the free ones when that is
    more than what is free), so the state store and the pool's client never meet EMFILE."""
    free = soft_limit - in_use
    return max(1, min(wanted, free - reserve if free >= 2 * reserve else free // 2))


class AdviceServer:
    """Serves ``endpoint`` on ``(host, port)`` from a daemon thread; port 0 picks a free port.

    A full server evicts: a new connection closes the oldest one that has not sent a complete
    request (or is being drained), so clients that hold connections open cannot lock the hooks
    out. Each loop turn reads the ready connections before it accepts at most half the cap, and
    never evicts one accepted in the same turn (not read yet), so a client that sends its request
    at once is read before it can be evicted; when no older connection can go (all are being
    answered), the new one is closed at once.
    """

    MAX_CONNECTIONS = 2048
    """Open client connections at most; lowered to what the descriptor limit allows (start)."""
    FD_RESERVE = 64
    """Descriptors kept free for the rest of the daemon (snapshots, the pool's client, logs)."""
    IDLE_TIMEOUT = 10.0
    """Seconds a connection may stay silent before its request begins (hooks send at once)."""
    REQUEST_TIMEOUT = 5.0
    """Seconds from a request's first byte until its answer is sent (cuts slowloris drips)."""
    MAX_REQUEST_BYTES = 8192
    """Request line and headers at most; hooks send about 150 bytes."""
    BACKLOG = 1024
    """Listen queue for bursts between two accepts (the kernel caps it at net.core.somaxconn)."""
    WORKERS = 4
    """Threads calling ``Endpoint.answer``."""
    LINGER = 2.0
    """Seconds to wait for the client to close after the answer (what arrives is discarded)."""

    def __init__(
        self,
        endpoint: Endpoint,
        host: str,
        port: int,
        *,
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = IDLE_TIMEOUT,
        request_timeout: float = REQUEST_TIMEOUT,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        workers: int = WORKERS,
    ) -> None:
        self.endpoint = endpoint
        self.wanted_connections = max_connections
        self.sweep_every = min(0.25, idle_timeout / 4, request_timeout / 4)
        self.stats: Counter[str] = Counter()
        self.fd_limit = raise_fd_limit()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET  # ::1 and other IPv6
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind((host, port))
            self.listener.listen(self.BACKLOG)
        except OSError:
            self.listener.close()
            raise
        self.listener.setblocking(False)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.selector.register(self._wake_r, selectors.EVENT_READ, WAKE)
        in_use = open_descriptors()
        self.max_connections = connection_cap(
            max_connections, self.fd_limit, in_use, self.FD_RESERVE
        )
        self._jobs: queue.SimpleQueue[tuple[Connection, str, str] | None] = queue.SimpleQueue()
        self._conns = Connections(
            self.selector,
            self.stats,
            lambda conn, method, path: self._jobs.put((conn, method, path)),
            idle_timeout=idle_timeout,
            request_timeout=request_timeout,
            max_request_bytes=max_request_bytes,
            linger=min(self.LINGER, idle_timeout),
        )
        self._done: deque[tuple[Connection, bytes, int]] = deque()
        self._stopping = False
        self._turns = 0
        self._accept_batch = max(1, min(128, self.max_connections // 2))
        self._accept_paused_until: float | None = None
        self._last_fd_warning = -1e9
        self.thread = threading.Thread(target=self._loop, daemon=True, name="http")
        self.workers = [
            threading.Thread(target=self._work, daemon=True, name=f"http-worker-{i}")
            for i in range(workers)
        ]

    @property
    def address(self) -> str:
        host, port = self.listener.getsockname()[:2]
        return f"{host!s}:{port}"

    @property
    def open_connections(self) -> int:
        return len(self._conns)

    def start(self) -> None:
        for thread in (*self.workers, self.thread):
            thread.start()
        log.info(
            "advice endpoint listening on %s (at most %d connections, descriptor limit %d)",
            self.address,
            self.max_connections,
            self.fd_limit,
        )
        if self.max_connections < self.wanted_connections:
            log.warning(
                "descriptor limit %d leaves room for %d connections, not %d: raise LimitNOFILE",
                self.fd_limit,
                self.max_connections,
                self.wanted_connections,
            )

    def stop(self) -> None:
        self._stopping = True
        for _ in self.workers:
            self._jobs.put(None)
        if self.thread.ident is None:
            self._close_all()
        else:
            self._wake()
            self.thread.join(10)
        log.debug("advice endpoint stopped: %s", dict(self.stats))

    # -- the loop thread ---------------------------------------------------------------------
    def _loop(self) -> None:
        next_sweep = time.monotonic()
        try:
            while not self._stopping:
                try:
                    next_sweep = self._turn(next_sweep)
                except Exception:  # a bug must not end the endpoint: log, breathe, go on
                    log.exception("advice endpoint: unexpected error in its loop")
                    time.sleep(self.sweep_every)
        finally:
            self._close_all()

    def _turn(self, next_sweep: float) -> float:
        self._turns += 1
        acceptable = False
        for key, _ in self.selector.select(max(0.0, next_sweep - time.monotonic())):
            if key.data is None:
                acceptable = True  # after the reads: a request that arrived is read first
            elif key.data is WAKE:
                self._collect()
            else:
                self._conns.guarded(self._conns.service, key.data)
        if acceptable:
            self._accept()
        now = time.monotonic()
        if now < next_sweep:
            return next_sweep
        self._sweep(now)
        return now + self.sweep_every

    def _accept(self) -> None:
        for _ in range(self._accept_batch):
            try:
                sock, addr = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self._pause_accepting(exc)
                return  # ECONNABORTED and the like: the client is gone
            self.stats["accepted"] += 1
            if len(self._conns) >= self.max_connections and not self._conns.evict(self._turns):
                self.stats["refused"] += 1
                log.debug("%s: refused, all %d connections busy", addr[0], len(self._conns))
                sock.close()
                continue
            self._conns.add(sock, str(addr[0]), self._turns)

    def _pause_accepting(self, exc: OSError) -> None:
        """Out of descriptors (something else holds them): free one, breathe, try again."""
        self.stats["accept_errors"] += 1
        now = time.monotonic()
        if now - self._last_fd_warning > 60:
            log.warning("advice endpoint cannot accept (%s); shedding idle connections", exc)
            self._last_fd_warning = now
        self._conns.evict(self._turns)
        self.selector.unregister(self.listener)
        self._accept_paused_until = now + self.sweep_every

    def _collect(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while self._wake_r.recv(4096):
                pass
        while self._done:
            conn, data, status = self._done.popleft()
            if conn in self._conns:
                self._conns.guarded(self._conns.send, conn, data, status)

    def _sweep(self, now: float) -> None:
        self._conns.sweep(now)
        if self._accept_paused_until is not None and now >= self._accept_paused_until:
            self._accept_paused_until = None
            self.selector.register(self.listener, selectors.EVENT_READ, None)

    def _close_all(self) -> None:
        self._conns.close_all()
        for sock in (self.listener, self._wake_r, self._wake_w):
            sock.close()
        if self.selector.get_map() is not None:  # None once closed
            self.selector.close()

    # -- the worker threads ------------------------------------------------------------------
    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            conn, method, path = job
            if self._stopping or conn.state != ANSWERING:
                continue  # timed out while queued
            try:
                status, ctype, body = self.endpoint.answer(path, conn.peer)
            except Exception:
                log.exception("endpoint failed on %s", path)
                status, ctype, body = 500, TEXT, b"internal error\n"
            self._done.append((conn, response(status, ctype, body, method == "HEAD"), status))
            self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (one is pending anyway) or closed (stopped)
            self._wake_w.send(b"\0")
