"""A stand-in for the daemon's advice endpoint (``GET /advice/MACHINE``, ``Attr = value`` lines)
until the daemon issue lands; its lines come from ``advisor.condor.attributes``, as the daemon's
will. Serving nothing for a machine is how a test makes the advisor unreachable for it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from advisor.condor.attributes import advice_attributes, attribute_lines
from plugins.advice import MachineAdvice


class AdviceServer:
    def __init__(self) -> None:
        self.lines: dict[str, str] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                machine = unquote(self.path.removeprefix("/advice/"))
                body = server.lines.get(machine, "").encode()
                self.send_response(200 if body else 404)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def set(self, machine: str, advice: MachineAdvice, now: float, expires: float) -> None:
        self.lines[machine] = attribute_lines(advice_attributes(advice, now, expires, "test/1"))

    def clear(self) -> None:
        self.lines.clear()

    def close(self) -> None:
        self.httpd.shutdown()
