"""What the read-only advice endpoint answers on each path.

``GET /advice/MACHINE``  ``Attr = value`` lines for a STARTD_CRON hook (empty: no advice)
``GET /advice``          all live advice as JSON
``GET /explain/MACHINE`` why the machine has its advice (JSON); 404 with the known machines
                         when the daemon never saw it
``GET /healthz``         liveness and the daemon's clock (JSON)
``GET /metrics``         Prometheus exposition
Peers in ``publish.admin`` read every path, peers in ``publish.allow`` only ``/advice/MACHINE``
and ``/healthz``; anyone else gets 403 (``advisor.daemon.access``, where a new path must be
classified too). ``HEAD`` is answered like ``GET`` without the body. Nothing here changes state:
other methods get 405 (``Allow: GET, HEAD``), a malformed request 400, an oversized one 431. The
server that carries these answers is ``advisor.daemon.http_server.AdviceServer``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from prometheus_client import CONTENT_TYPE_LATEST

from advisor.daemon.access import Access
from advisor.daemon.board import AdviceBoard, as_json, hook_lines
from advisor.daemon.explain import UnknownMachine
from advisor.daemon.metrics import DaemonMetrics

TEXT = "text/plain; charset=utf-8"


class Endpoint:
    """What the handler reads; every callable is safe to call from the server's threads.

    ``access`` may be replaced while serving (a reload): each answer reads it once. ``explain``
    raises ``UnknownMachine`` for a machine the daemon never saw."""

    def __init__(
        self,
        board: AdviceBoard,
        metrics: DaemonMetrics,
        clock: Callable[[], float],
        health: Callable[[], dict[str, Any]],
        explain: Callable[[str], dict[str, Any]],
        metrics_enabled: bool = True,
        access: Access | None = None,
    ) -> None:
        self.board = board
        self.metrics = metrics
        self.clock = clock
        self.health = health
        self.explain = explain
        self.metrics_enabled = metrics_enabled
        self.access = access or Access()

    def answer(self, path: str, peer: str) -> tuple[int, str, bytes]:
        """Status, content type and body for a GET of ``path`` by the client at ``peer``."""
        needed = self.access.refusal(peer, path)
        if needed is not None:
            self.metrics.forbidden.labels(needed).inc()
            return 403, TEXT, f"forbidden: {peer} is not in {needed}\n".encode()
        now = self.clock()
        if path.startswith("/advice/"):
            self.metrics.served.labels("hook").inc()
            body = hook_lines(self.board.get(unquote(path[len("/advice/") :]), now))
            return 200, TEXT, body.encode()
        if path == "/advice":
            self.metrics.served.labels("json").inc()
            live = {m: as_json(p) for m, p in sorted(self.board.live(now).items())}
            return _json({"now": now, "machines": live})
        if path.startswith("/explain/"):
            try:
                return _json(self.explain(unquote(path[len("/explain/") :])))
            except UnknownMachine as unknown:
                return _json(unknown.as_json(), 404)
        if path == "/healthz":
            return _json(self.health())
        if path == "/metrics" and self.metrics_enabled:
            return 200, CONTENT_TYPE_LATEST, self.metrics.exposition()
        return 404, TEXT, b"not found\n"


def _json(data: dict[str, Any], status: int = 200) -> tuple[int, str, bytes]:
    return status, "application/json", (json.dumps(data, indent=1) + "\n").encode()
