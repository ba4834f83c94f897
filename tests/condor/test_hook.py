"""The shipped STARTD_CRON hook: prints the daemon's answer whole, nothing when unreachable.

Hostile endpoints (expressions, truncation, redirects, proxies, slow servers): test_hook_hostile.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import PROJECT_ROOT

from advisor.condor.attributes import advice_attributes, attribute_lines
from advisor.condor.merge_sink import MergeStartdSink
from advisor.daemon.board import AdviceBoard
from advisor.daemon.http_endpoint import Endpoint
from advisor.daemon.http_server import AdviceServer
from advisor.daemon.metrics import DaemonMetrics
from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice

HOOK = PROJECT_ROOT / "deploy/hook/htcondor-advisor-hook"


def run_hook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HOOK), *args], capture_output=True, text=True, timeout=30
    )


def test_hook_prints_the_daemons_advice_lines() -> None:
    now = time.time()  # the hook checks AdvisorExpires against this machine's clock
    board = AdviceBoard("ranker/1")
    board.publish(
        Advice({"pc1.example.org": MachineAdvice(rank=2.5, hold=True, expires=now + 600)}), now
    )
    endpoint = Endpoint(board, DaemonMetrics(time.time), time.time, dict, lambda m: {})
    server = AdviceServer(endpoint, "127.0.0.1", 0)
    server.start()
    try:
        url = f"http://{server.address}"
        out = run_hook(url, "pc1.example.org", "2")
        assert out.returncode == 0 and out.stderr == ""
        lines = out.stdout.splitlines()
        assert "AdvisorRank = 2.5" in lines and "AdvisorHold = true" in lines
        assert f"AdvisorExpires = {now + 600!r}" in lines and 'AdvisorPolicy = "ranker/1"' in lines
        assert run_hook(url, "unknown.example.org").stdout == ""  # empty 200
    finally:
        server.stop()


def test_hook_prints_nothing_from_an_endpoint_that_sets_other_attributes() -> None:
    now = time.time()
    advice = advice_attributes(MachineAdvice(rank=1.0), now, now + 600, "ranker/1")
    good = attribute_lines(advice).encode()
    bodies = {"/advice/good": good, "/advice/evil": b"START = true\n" + good}

    class Hostile(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = bodies[self.path]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        assert run_hook(url, "good").stdout == good.decode()
        assert run_hook(url, "evil").stdout == ""  # all or nothing: START spoils the answer
    finally:
        httpd.shutdown()


def test_hook_prints_nothing_says_why_and_is_quick_when_the_advisor_is_unreachable() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    began = time.monotonic()
    url = f"http://127.0.0.1:{port}"
    out = run_hook(url, "pc1.example.org", "1")
    # exit 1 and one line: the startd logs it (STARTD_CRON_LOG_NON_ZERO_EXIT in deploy/)
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr.startswith(f"htcondor-advisor-hook: no advice from {url}: ")
    assert out.stderr.count("\n") == 1
    assert run_hook("not a url", "pc1").stdout == ""
    assert run_hook().stdout == ""
    assert time.monotonic() - began < 20


def test_a_hook_line_without_its_url_and_machine_is_said_in_the_startlog() -> None:
    # it exited 0 silently, so a broken PeriodicCronHook line left no trace anywhere
    done = run_hook("http://127.0.0.1:9")
    assert done.returncode == 2 and done.stdout == ""
    assert "usage: htcondor-advisor-hook URL MACHINE" in done.stderr


def test_advice_withdrawn_before_it_expires_reaches_the_startd_as_expired() -> None:
    """A hook that printed nothing left the startd's last lines in force until their own
    AdvisorExpires (an hour by default): a guard that made all advice neutral took that long
    to act. The board now serves a withdrawal, the hook prints it, and it replaces the old
    lines with ones that expired at the withdrawal (neutral by test_deploy_expressions's
    test_expired_or_missing_advice_is_exactly_neutral)."""
    now = time.time()
    board = AdviceBoard("ranker/1")
    held = MachineAdvice(rank=-1.0, hold=True, expires=now + 600)
    board.publish(Advice({"pc1.example.org": held, "pc2.example.org": held}), now - 60)
    board.publish(Advice({"pc1.example.org": NEUTRAL_MACHINE_ADVICE}), now - 1)
    assert set(board.live(now)) == {"pc2.example.org"}  # withdrawn is not advice
    endpoint = Endpoint(board, DaemonMetrics(time.time), time.time, dict, lambda m: {})
    server = AdviceServer(endpoint, "127.0.0.1", 0)
    server.start()
    try:
        out = run_hook(f"http://{server.address}", "pc1.example.org", "2")
    finally:
        server.stop()
    assert out.returncode == 0 and out.stderr == ""
    lines = dict(line.split(" = ", 1) for line in out.stdout.splitlines())
    assert float(lines["AdvisorExpires"]) == now - 1 <= float(lines["AdvisorUpdated"])
    assert lines["AdvisorHold"] == "false" and lines["AdvisorRank"] == "0.0"
    board.publish(Advice({"pc1.example.org": NEUTRAL_MACHINE_ADVICE}), now + 60)
    kept = board.get("pc1.example.org", now + 60)
    assert kept is not None and kept.updated == now - 1  # (said once, kept)
    assert board.get("pc1.example.org", now + 600) is None  # the withdrawn one expired anyway


def test_the_collector_merge_withdraws_with_an_expired_copy() -> None:
    sent: list[list] = []

    class Collector:
        def advertise(self, ads: list, command: str) -> None:
            sent.append(ads)

    sink = MergeStartdSink(Collector(), lambda: {"pc1": ["slot1@pc1"]}, policy="ranker/1")
    sink.publish(Advice({"pc1": NEUTRAL_MACHINE_ADVICE}), 1000.0)
    ((ad,),) = sent
    assert ad["AdvisorExpires"] == 1000.0 and ad["AdvisorHold"] is False
