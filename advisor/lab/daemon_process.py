"""``htcondor-advisor run`` as a child process, watched through its log and its endpoint.

Used by the crash benchmark (``bench-daemon kill``) and the process tests.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

LISTENING = re.compile(r"listening on (\S+:\d+)")


class DaemonProcess:
    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            self.command(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self.address: str | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def command(self, args: list[str]) -> list[str]:
        """The daemon's command line (a wrapper such as ``ip netns exec`` extends it)."""
        return [sys.executable, "-m", "advisor.cli", "run", "--listen", "127.0.0.1:0", *args]

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            match = LISTENING.search(line)
            if match:
                self.address = match.group(1)

    def log(self) -> str:
        return "".join(self.lines)

    def wait_for(self, check: Callable[[], Any], timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting; daemon log:\n{self.log()}")

    def get(self, path: str) -> tuple[int, str, str]:
        """Status, content type and body of a GET."""
        if self.address is None:
            self.wait_for(lambda: self.address)
        try:
            with urllib.request.urlopen(f"http://{self.address}{path}", timeout=10) as r:
                return r.status, r.headers["Content-Type"], r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.read().decode()

    def finish(self, timeout: float = 60.0) -> int:
        try:
            self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._reader.join(5)
        return self.proc.returncode
