"""The shipped STARTD_CRON hook: passes only Advisor* lines, prints nothing when unreachable."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

from conftest import PROJECT_ROOT
from integration.advice_server import AdviceServer

from plugins.advice import MachineAdvice

HOOK = PROJECT_ROOT / "deploy/hook/htcondor-advisor-hook"


def run_hook(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HOOK), *args], capture_output=True, text=True, timeout=30
    )


def test_hook_prints_the_machines_advice_lines() -> None:
    server = AdviceServer()
    try:
        server.set("pc1.example.org", MachineAdvice(rank=2.5, hold=True), 100.0, 700.0)
        server.lines["evil.example.org"] = "START = true\nAdvisorRank = 1.0\nRequirements = false\n"
        out = run_hook(server.url, "pc1.example.org", "2")
        assert out.returncode == 0 and out.stderr == ""
        lines = out.stdout.splitlines()
        assert "AdvisorRank = 2.5" in lines and "AdvisorHold = true" in lines
        assert "AdvisorExpires = 700.0" in lines
        assert run_hook(server.url, "evil.example.org").stdout == "AdvisorRank = 1.0\n"
        assert run_hook(server.url, "unknown.example.org").stdout == ""  # 404
    finally:
        server.close()


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
