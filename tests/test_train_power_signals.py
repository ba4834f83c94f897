"""``train-power`` stops cleanly on SIGTERM and SIGINT: the iteration under way finishes, its
checkpoint is saved, the worker pool shuts down and the command exits 0 (resumable)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.lab.power_checkpoints import checkpoint_path, load_checkpoint


def _iteration(path: Path) -> int:
    try:
        return int(load_checkpoint(path)[2]["iteration"])
    except (FileNotFoundError, OSError, ValueError, KeyError):
        return 0


@pytest.mark.realdata
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_saves_the_checkpoint_and_exits(
    shared_data: Path, tmp_path: Path, signum: signal.Signals
) -> None:
    command = [sys.executable, "-m", "advisor.cli", "train-power", "hpc2n"]
    command += ["--data-dir", str(shared_data), "--out", str(tmp_path), "--iterations", "1000"]
    command += ["--actors", "1", "--workers", "1", "--hidden", "8"]
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    path = checkpoint_path(str(tmp_path), "hpc2n")
    deadline = time.monotonic() + 120
    while _iteration(path) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signum)
    out, _ = proc.communicate(timeout=60)
    text = out.decode()
    assert proc.returncode == 0, text
    assert f"stopped by {signum.name}" in text
    done = _iteration(path)
    assert 1 <= done < 1000
    assert f"iterations {done};" in text
