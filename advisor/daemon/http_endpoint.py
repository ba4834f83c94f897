"""The read-only advice endpoint (stdlib HTTP server in a thread of its own).

``GET /advice/MACHINE``  ``Attr = value`` lines for a STARTD_CRON hook (empty: no advice)
``GET /advice``          all live advice as JSON
``GET /explain/MACHINE`` why the machine has its advice (JSON)
``GET /healthz``         liveness and the daemon's clock (JSON)
``GET /metrics``         Prometheus exposition
Nothing here changes state: other methods get 405.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from prometheus_client import CONTENT_TYPE_LATEST

from advisor.daemon.board import AdviceBoard, as_json, hook_lines
from advisor.daemon.metrics import DaemonMetrics

log = logging.getLogger("htcondor_advisor.http")


class Endpoint:
    """What the handler reads; every callable is safe to call from the server's threads."""

    def __init__(
        self,
        board: AdviceBoard,
        metrics: DaemonMetrics,
        clock: Callable[[], float],
        health: Callable[[], dict[str, Any]],
        explain: Callable[[str], dict[str, Any]],
        metrics_enabled: bool = True,
    ) -> None:
        self.board = board
        self.metrics = metrics
        self.clock = clock
        self.health = health
        self.explain = explain
        self.metrics_enabled = metrics_enabled

    def answer(self, path: str) -> tuple[int, str, bytes]:
        """Status, content type and body for a GET of ``path``."""
        now = self.clock()
        if path.startswith("/advice/"):
            self.metrics.served.labels("hook").inc()
            body = hook_lines(self.board.get(unquote(path[len("/advice/") :]), now))
            return 200, "text/plain; charset=utf-8", body.encode()
        if path == "/advice":
            self.metrics.served.labels("json").inc()
            live = {m: as_json(p) for m, p in sorted(self.board.live(now).items())}
            return _json({"now": now, "machines": live})
        if path.startswith("/explain/"):
            return _json(self.explain(unquote(path[len("/explain/") :])))
        if path == "/healthz":
            return _json(self.health())
        if path == "/metrics" and self.metrics_enabled:
            return 200, CONTENT_TYPE_LATEST, self.metrics.exposition()
        return 404, "text/plain; charset=utf-8", b"not found\n"


def _json(data: dict[str, Any]) -> tuple[int, str, bytes]:
    return 200, "application/json", (json.dumps(data, indent=1) + "\n").encode()


class _Handler(BaseHTTPRequestHandler):
    endpoint: Endpoint
    server_version = "htcondor-advisor"

    def do_GET(self) -> None:
        try:
            status, ctype, body = self.endpoint.answer(self.path.split("?", 1)[0])
        except Exception:
            log.exception("endpoint failed on %s", self.path)
            status, ctype, body = 500, "text/plain; charset=utf-8", b"internal error\n"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _refuse(self) -> None:
        self.send_response(405)
        self.send_header("Allow", "GET")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class _Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class AdviceServer:
    """Serves ``endpoint`` on ``(host, port)`` from a daemon thread; port 0 picks a free port."""

    def __init__(self, endpoint: Endpoint, host: str, port: int) -> None:
        handler = type("Handler", (_Handler,), {"endpoint": endpoint})
        server = _Server6 if ":" in host else ThreadingHTTPServer  # ::1 and other IPv6
        self.httpd = server((host, port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="http")

    @property
    def address(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"{host!s}:{port}"

    def start(self) -> None:
        self.thread.start()
        log.info("advice endpoint listening on %s", self.address)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
