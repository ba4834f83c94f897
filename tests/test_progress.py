"""Progress bars appear on a terminal only: captured output and logs get no carriage-return
noise, and ``--no-progress`` still turns a bar off on a terminal."""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.commands.replay import progress_bar
from advisor.lab.parallel import run_parallel


@contextlib.contextmanager
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """stderr on a real pseudo-terminal of 80 columns; yields the end to read it from. Entered
    in the test itself: pytest puts its own capture back on sys.stderr after a fixture's setup."""
    reader, writer = os.openpty()
    fcntl.ioctl(writer, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        with open(writer, "w", encoding="utf-8") as stream, monkeypatch.context() as patch:
            patch.setattr(sys, "stderr", stream)
            yield reader
    finally:
        os.close(reader)


def drawn(reader: int) -> str:
    """What has been written to the terminal so far."""
    sys.stderr.flush()
    out = b""
    while select.select([reader], [], [], 0.2)[0]:
        out += os.read(reader, 4096)
    return out.decode()


def test_a_bar_is_drawn_on_a_terminal_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    with terminal(monkeypatch) as screen:
        assert run_parallel(abs, [-1, -2, -3], workers=1, desc="fits", progress=True) == [1, 2, 3]
        assert "fits" in drawn(screen)
        run_parallel(abs, [-1, -2, -3], workers=1, desc="fits", progress=False)  # --no-progress
        assert drawn(screen) == ""
        with progress_bar(True) as update:
            assert update is not None


def test_no_bar_where_stderr_is_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_parallel(abs, [-1, -2, -3], workers=1, desc="fits", progress=True) == [1, 2, 3]
    with progress_bar(True) as update:  # replay and the twin: not even a bar waiting 2 s
        assert update is None
    history = tmp_path / "history.txt"
    history.write_text("Owner QDate CompletionDate RemoteWallClockTime\nann 1 200 100\n")
    assert main(["trace", "history", str(history), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == ""
