"""The shipped STARTD_CRON hook: passes only Advisor* lines, prints nothing when unreachable."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import PROJECT_ROOT

from advisor.daemon.board import AdviceBoard
from advisor.daemon.http_endpoint import AdviceServer, Endpoint
from advisor.daemon.metrics import DaemonMetrics
from plugins.advice import Advice, MachineAdvice

HOOK = PROJECT_ROOT / "deploy/hook/htcondor-advisor-hook"


def run_hook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HOOK), *args], capture_output=True, text=True, timeout=30
    )


def test_hook_prints_the_daemons_advice_lines() -> None:
    board = AdviceBoard("ranker/1")
    board.publish(
        Advice({"pc1.example.org": MachineAdvice(rank=2.5, hold=True, expires=700.0)}), 100
    )
    endpoint = Endpoint(board, DaemonMetrics(lambda: 100.0), lambda: 100.0, dict, lambda m: {})
    server = AdviceServer(endpoint, "127.0.0.1", 0)
    server.start()
    try:
        url = f"http://{server.address}"
        out = run_hook(url, "pc1.example.org", "2")
        assert out.returncode == 0 and out.stderr == ""
        lines = out.stdout.splitlines()
        assert "AdvisorRank = 2.5" in lines and "AdvisorHold = true" in lines
        assert "AdvisorExpires = 700.0" in lines and 'AdvisorPolicy = "ranker/1"' in lines
        assert run_hook(url, "unknown.example.org").stdout == ""  # empty 200
    finally:
        server.stop()


def test_hook_passes_only_advisor_lines_from_a_hostile_endpoint() -> None:
    class Hostile(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"START = true\nAdvisorRank = 1.0\nRequirements = false\n")

        def log_message(self, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        assert run_hook(url, "evil.example.org").stdout == "AdvisorRank = 1.0\n"
    finally:
        httpd.shutdown()


def test_hook_is_silent_and_quick_when_the_advisor_is_unreachable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    began = time.monotonic()
    out = run_hook(f"http://127.0.0.1:{port}", "pc1.example.org", "1")
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    assert run_hook("not a url", "pc1").stdout == ""
    assert run_hook().stdout == ""
    assert time.monotonic() - began < 20
