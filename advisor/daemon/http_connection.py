"""The advice endpoint's client connections: their state, request parsing and non-blocking I/O.

Each connection carries one request: the answer says ``Connection: close``, then the server
half-closes and discards what the client still sends until it closes (a request body or a
pipelined request would otherwise turn the close into a reset that can destroy the answer before
the client reads it). Clients that reset or vanish are counted in ``stats`` and logged at DEBUG
in one line, never with a traceback. Everything here runs on the event-loop thread
(``advisor.daemon.http_server``); a complete request is handed to the workers.
"""

from __future__ import annotations

import logging
import re
import selectors
import socket
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from email.utils import formatdate
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from advisor.daemon.http_endpoint import TEXT

log = logging.getLogger("htcondor_advisor.http")

REQUEST_LINE = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP/(\d)\.\d")
HEADER_END = re.compile(rb"\r?\n\r?\n")
READING, ANSWERING, WRITING, DRAINING = "reading", "answering", "writing", "draining"
CLOSED = "closed"


def response(status: int, ctype: str, body: bytes, head_only: bool = False, *extra: str) -> bytes:
    """A complete HTTP/1.1 response that closes the connection."""
    head = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "Server: htcondor-advisor",
        f"Date: {formatdate(usegmt=True)}",
        f"Content-Type: {ctype}",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *extra,
    ]
    data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
    return data if head_only else data + body


def parse_request_line(line: str) -> tuple[str, str, str]:
    """Method, target (origin-form) and HTTP major version; empty strings when malformed."""
    match = REQUEST_LINE.fullmatch(line)
    method, target, major = match.groups() if match else ("", "", "")
    if target.lower().startswith(("http://", "https://")):
        target = urlsplit(target).path or "/"  # absolute-form
    return method, target, major


class Connection:
    """One client socket and where its single request stands."""

    __slots__ = (
        "born",
        "deadline",
        "events",
        "head",
        "out",
        "peer",
        "request",
        "sock",
        "started",
        "state",
    )

    def __init__(self, sock: socket.socket, peer: str, deadline: float, born: int) -> None:
        self.sock, self.peer, self.deadline = sock, peer, deadline
        self.born = born  # the loop turn that accepted it
        self.state = READING
        self.started = False  # a first byte arrived: the request deadline runs
        self.head = bytearray()  # the request as received so far
        self.request = ""  # its request line, for the log
        self.out = memoryview(b"")
        self.events = 0  # what the selector watches for

    def feed(self, data: bytes, limit: int) -> bytes | None:
        """Add received bytes; the request line once the head ends within ``limit`` bytes."""
        seen = len(self.head)
        self.head += data
        if seen == 0 or not self.head.strip(b"\r\n"):
            del self.head[: len(self.head) - len(self.head.lstrip(b"\r\n"))]  # RFC 9112 2.2
            seen = 0
        end = HEADER_END.search(self.head, max(0, seen - 3))
        if end is None or end.start() > limit:
            return None
        return bytes(self.head[: end.start()]).split(b"\n", 1)[0].rstrip(b"\r")


class Connections:
    """The open connections, oldest first, driven through ``selector`` by the loop thread.

    A complete, acceptable request goes to ``submit(conn, method, path)`` and the connection
    waits (``ANSWERING``) until ``send`` gets its answer; everything else is answered here.
    """

    def __init__(
        self,
        selector: selectors.BaseSelector,
        stats: Counter[str],
        submit: Callable[[Connection, str, str], None],
        *,
        idle_timeout: float,
        request_timeout: float,
        max_request_bytes: int,
        linger: float,
    ) -> None:
        self.selector, self.stats, self.submit = selector, stats, submit
        self.idle_timeout, self.request_timeout = idle_timeout, request_timeout
        self.max_request_bytes = max_request_bytes
        self.linger = linger
        self.live: OrderedDict[Connection, None] = OrderedDict()  # oldest first

    def __len__(self) -> int:
        return len(self.live)

    def __contains__(self, conn: object) -> bool:
        return conn in self.live

    def add(self, sock: socket.socket, peer: str, turn: int) -> None:
        """Watch a freshly accepted socket for its request."""
        sock.setblocking(False)
        conn = Connection(sock, peer, time.monotonic() + self.idle_timeout, turn)
        self.live[conn] = None
        self.watch(conn, selectors.EVENT_READ)

    def evict(self, turn: int) -> bool:
        """Close the oldest connection that is not being answered, to make room for a new one."""
        for conn in self.live:  # oldest first
            if conn.born == turn:
                return False  # this one and the rest came in this turn: not read yet
            if conn.state in (READING, DRAINING):
                self.close(conn, "evicted")
                return True
        return False

    def guarded(self, step: Callable[..., None], conn: Connection, *args: Any) -> None:
        """Run ``step`` on ``conn``; a bug here must cost one connection, never the endpoint."""
        try:
            step(conn, *args)
        except Exception:
            log.exception("advice endpoint: unexpected error on a connection from %s", conn.peer)
            self.close(conn, "failed")

    def service(self, conn: Connection) -> None:
        """Act on a ready socket according to the connection's state."""
        if conn.state == READING:
            self._read(conn)
        elif conn.state == WRITING:
            self._write(conn)
        elif conn.state == DRAINING:
            self._drain(conn)

    def _read(self, conn: Connection) -> None:
        try:
            data = conn.sock.recv(self.max_request_bytes + 1)
        except BlockingIOError:
            return
        except OSError as exc:
            self.close(conn, "aborted", exc)
            return
        if not data:
            self.close(conn, "aborted" if conn.head else "closed", "closed before a request")
            return
        if not conn.started:
            conn.started, conn.deadline = True, time.monotonic() + self.request_timeout
        line = conn.feed(data, self.max_request_bytes)
        if line is None:
            if len(conn.head) > self.max_request_bytes:
                self._refuse(conn, 431, "too_large")
            return
        self._route(conn, line)

    def _route(self, conn: Connection, line: bytes) -> None:
        conn.request = line.decode("latin-1")
        method, target, major = parse_request_line(conn.request)
        if not target.startswith("/"):
            self._refuse(conn, 400, "bad_request")
        elif major != "1":
            self._refuse(conn, 505, "bad_request")
        elif method not in ("GET", "HEAD"):
            self._refuse(conn, 405, "not_allowed", "Allow: GET, HEAD")
        else:
            conn.state = ANSWERING
            self.watch(conn, 0)
            self.submit(conn, method, target.split("?", 1)[0])

    def _refuse(self, conn: Connection, status: int, counter: str, *extra: str) -> None:
        self.stats[counter] += 1
        body = f"{HTTPStatus(status).phrase.lower()}\n".encode()
        self.send(conn, response(status, TEXT, body, False, *extra), status)

    def send(self, conn: Connection, data: bytes, status: int) -> None:
        """Start writing the answer ``data``; the loop finishes what the socket cannot take."""
        log.debug('%s "%s" %d %d', conn.peer, conn.request, status, len(data))
        conn.state, conn.out = WRITING, memoryview(data)
        self._write(conn)

    def _write(self, conn: Connection) -> None:
        try:
            while conn.out:
                conn.out = conn.out[conn.sock.send(conn.out) :]
        except BlockingIOError:
            self.watch(conn, selectors.EVENT_WRITE)
            return
        except OSError as exc:
            self.close(conn, "aborted", exc)
            return
        self.stats["answered"] += 1
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self.close(conn)
            return
        conn.state = DRAINING
        conn.deadline = time.monotonic() + self.linger
        self.watch(conn, selectors.EVENT_READ)

    def _drain(self, conn: Connection) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close(conn)

    def sweep(self, now: float) -> None:
        """Close the connections past their deadline."""
        late = [conn for conn in self.live if conn.deadline <= now]
        for conn in late:
            if conn.state == DRAINING:
                self.close(conn)
            elif not conn.started:
                self.close(conn, "idle_timeout", f"silent for {self.idle_timeout:g} s")
            else:
                self.close(conn, "request_timeout", f"{conn.state}, past the request deadline")

    def watch(self, conn: Connection, events: int) -> None:
        """Have the selector watch ``conn`` for ``events`` (0: not at all)."""
        if events == conn.events:
            return
        if not conn.events:
            self.selector.register(conn.sock, events, conn)
        elif not events:
            self.selector.unregister(conn.sock)
        else:
            self.selector.modify(conn.sock, events, conn)
        conn.events = events

    def close(self, conn: Connection, counter: str | None = None, why: object = None) -> None:
        """Close ``conn`` once, counting and logging ``counter`` when it did not end normally."""
        if conn not in self.live:
            return
        del self.live[conn]
        self.watch(conn, 0)
        if counter is not None:  # counted before the client can see the close
            self.stats[counter] += 1
            log.debug("%s: %s (%s)", conn.peer, counter.replace("_", " "), why or conn.state)
        conn.sock.close()
        conn.state = CLOSED

    def close_all(self) -> None:
        for conn in list(self.live):
            self.close(conn)
