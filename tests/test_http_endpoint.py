"""The advice endpoint under hostile clients: idle holders, slow drips, resets (loopback only).

Bounds are asserted (threads, descriptors, connections), never durations: speed is the business
of ``htcondor-advisor bench-daemon idle-connections``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import select
import socket
import struct
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from advisor.daemon.board import AdviceBoard
from advisor.daemon.http_endpoint import Endpoint
from advisor.daemon.http_server import AdviceServer, connection_cap, raise_fd_limit
from advisor.daemon.metrics import DaemonMetrics
from plugins.contract.advice import Advice, MachineAdvice

NOW = 1000.0


def make_endpoint(explain: Callable[[str], dict[str, Any]] | None = None) -> Endpoint:
    """Built as ``advisor/daemon/runtime.py`` builds it, with one machine advised."""
    board = AdviceBoard("ranker/1")
    board.publish(Advice({"pc1": MachineAdvice(rank=2.5, hold=True, expires=NOW + 600)}), NOW)
    metrics = DaemonMetrics(lambda: NOW)
    return Endpoint(
        board,
        metrics,
        lambda: NOW,
        lambda: {"status": "ok", "now": NOW},
        explain or (lambda machine: {"machine": machine}),
    )


@contextlib.contextmanager
def serving(endpoint: Endpoint | None = None, **limits: Any) -> Iterator[AdviceServer]:
    server = AdviceServer(endpoint or make_endpoint(), "127.0.0.1", 0, **limits)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def connect(server: AdviceServer, timeout: float = 10.0) -> socket.socket:
    host, port = server.address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=timeout)


def exchange(server: AdviceServer, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read to the server's close: status, headers, body."""
    with connect(server) as sock:
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return int(status_line.split()[1]), headers, body


def get(server: AdviceServer, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://{server.address}{path}", timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def closed_by_server(sock: socket.socket, within: float = 10.0) -> bool:
    """True once the server closed ``sock`` (EOF or reset); False if it stayed open ``within``."""
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def wait_until(check: Callable[[], bool], tries: int = 500) -> bool:
    for _ in range(tries):
        if check():
            return True
        time.sleep(0.02)
    return False


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def reset(sock: socket.socket) -> None:
    """Close with an RST instead of a FIN (SO_LINGER on, zero seconds)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_answers_get_and_head_on_every_path() -> None:
    with serving() as server:
        status, body = get(server, "/advice/pc1")
        assert status == 200 and b"AdvisorRank = 2.5\n" in body and b"AdvisorHold = true\n" in body
        assert get(server, "/advice/unknown.example.org") == (200, b"")
        status, body = get(server, "/healthz")
        assert status == 200 and json.loads(body) == {"status": "ok", "now": NOW}
        assert json.loads(get(server, "/advice")[1])["machines"]["pc1"]["rank"] == 2.5
        assert json.loads(get(server, "/explain/pc1?x=1")[1]) == {"machine": "pc1"}
        assert b"advisor_advice_served" in get(server, "/metrics")[1]
        assert get(server, "/nowhere")[0] == 404
        status, headers, body = exchange(server, b"HEAD /advice/pc1 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
        assert headers["Connection"] == "close"
        absolute = b"GET http://advisor:9681/advice/pc1 HTTP/1.0\r\n\r\n"
        assert b"AdvisorRank = 2.5\n" in exchange(server, absolute)[2]
        assert exchange(server, b"\r\nGET /healthz HTTP/1.0\n\n")[0] == 200  # bare LF, leading CRLF


def test_refuses_other_methods_and_malformed_requests() -> None:
    with serving(max_request_bytes=1024) as server:
        status, headers, _ = exchange(
            server, b"POST /advice/pc1 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
        )
        assert status == 405 and headers["Allow"] == "GET, HEAD"
        assert exchange(server, b"DELETE /advice HTTP/1.1\r\n\r\n")[0] == 405
        assert exchange(server, b"HELLO\r\n\r\n")[0] == 400
        assert exchange(server, b"GET nowhere HTTP/1.1\r\n\r\n")[0] == 400
        assert exchange(server, b"GET / HTTP/2.0\r\n\r\n")[0] == 505
        huge = b"GET /advice/pc1 HTTP/1.1\r\nX-Pad: " + b"a" * 2000 + b"\r\n\r\n"
        assert exchange(server, huge)[0] == 431
        assert get(server, "/advice/pc1")[0] == 200
        assert server.stats["not_allowed"] == 2 and server.stats["too_large"] == 1


def test_an_idle_connection_is_closed_after_the_idle_timeout() -> None:
    with serving(idle_timeout=0.5) as server, connect(server) as idle:
        assert closed_by_server(idle)
        assert server.stats["idle_timeout"] == 1 and server.open_connections == 0
        assert get(server, "/healthz")[0] == 200


def test_a_slowloris_drip_is_cut_at_the_request_deadline() -> None:
    request = b"GET /advice/pc1 HTTP/1.1\r\n" + b"X-Drip: " + b"a" * 400 + b"\r\n\r\n"
    with serving(idle_timeout=30.0, request_timeout=0.5) as server, connect(server) as drip:
        sent = 0
        for byte in request:  # a byte every 20 ms: the whole request would take over 8 s
            if select.select([drip], [], [], 0)[0]:
                break  # the server closed (EOF readable)
            try:
                drip.send(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += 1
            time.sleep(0.02)
        assert sent < len(request) and closed_by_server(drip)
        assert server.stats["request_timeout"] == 1 and server.stats["answered"] == 0


@pytest.mark.parametrize("cap", [16, 2048], ids=["beyond-the-cap", "under-the-cap"])
def test_held_idle_connections_starve_neither_clients_nor_descriptors(cap: int) -> None:
    held_count = 300
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if min(soft, hard) < 2 * held_count + 200:
        pytest.skip(f"descriptor limit {soft}/{hard} too low to hold {held_count} connections")
    threads, fds = threading.active_count(), open_fds()
    with serving(max_connections=cap) as server:
        held = [connect(server) for _ in range(held_count)]
        try:
            for _ in range(20):
                status, body = get(server, "/advice/pc1")
                assert status == 200 and b"AdvisorRank = 2.5\n" in body
                assert get(server, "/healthz")[0] == 200
            assert threading.active_count() <= threads + 1 + AdviceServer.WORKERS
            # the last client's connection may still be draining (+1); descriptors: the test's
            # own sockets, the server's connections, its listener, wake-up pair and epoll
            assert server.open_connections <= min(cap, held_count + 1)
            assert open_fds() <= fds + held_count + min(cap, held_count + 1) + 4 + 2
            if cap < held_count:
                assert server.stats["evicted"] >= held_count - cap
        finally:
            for sock in held:
                sock.close()
    assert threading.active_count() <= threads + AdviceServer.WORKERS  # workers end soon after


def test_a_client_reset_leaves_no_traceback_and_the_server_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="htcondor_advisor.http")
    with serving(max_connections=64) as server:  # under any descriptor limit: no warning
        for request in (b"GET /adv", b"GET /metrics HTTP/1.1\r\n\r\n") * 10:
            sock = connect(server)
            sock.sendall(request)
            reset(sock)
        assert wait_until(lambda: server.open_connections == 0)
        assert get(server, "/advice/pc1")[0] == 200
        assert server.stats["aborted"] >= 10  # the half requests, at least
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    assert "Traceback" not in caplog.text
    aborted = [r for r in caplog.records if "aborted" in r.getMessage()]
    assert aborted and all("\n" not in r.getMessage() for r in aborted)


def test_a_slow_answer_does_not_stall_the_hooks() -> None:
    release = threading.Event()

    def stuck(machine: str) -> dict[str, Any]:  # /explain waits for the host's lock
        release.wait(30)
        return {"machine": machine}

    with serving(make_endpoint(stuck)) as server:
        slow = threading.Thread(target=get, args=(server, "/explain/pc1"))
        slow.start()
        try:
            for _ in range(10):
                assert get(server, "/advice/pc1")[0] == 200
            assert slow.is_alive() and not release.is_set()
        finally:
            release.set()
            slow.join(30)


def test_a_failing_answer_is_a_500_and_the_server_goes_on() -> None:
    def broken(machine: str) -> dict[str, Any]:
        raise RuntimeError("policy state unreadable")

    with serving(make_endpoint(broken)) as server:
        assert get(server, "/explain/pc1") == (500, b"internal error\n")
        assert get(server, "/advice/pc1")[0] == 200


def test_listens_on_ipv6_loopback() -> None:
    try:
        server = AdviceServer(make_endpoint(), "::1", 0)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    server.start()
    try:
        host, port = server.address.rsplit(":", 1)
        assert host == "::1"
        with urllib.request.urlopen(f"http://[::1]:{port}/advice/pc1", timeout=10) as reply:
            assert b"AdvisorRank = 2.5\n" in reply.read()
    finally:
        server.stop()


def test_the_connection_cap_leaves_descriptors_for_the_rest_of_the_daemon() -> None:
    assert connection_cap(2048, 65536, 30, 64) == 2048
    assert connection_cap(2048, 1024, 30, 64) == 1024 - 30 - 64
    assert connection_cap(2048, 64, 20, 64) == 22  # a tiny limit: half of what is free
    assert connection_cap(2048, 10, 12, 64) == 1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256), hard))
        raised = raise_fd_limit()
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == raised >= min(soft, 256)
        if hard != resource.RLIM_INFINITY:
            assert raised == hard
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
