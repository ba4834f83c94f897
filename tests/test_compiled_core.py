"""The compiled hot modules (a regular install, ``setup.py``) replay exactly as the pure Python
source does: the same ``jobs.csv`` to the byte, for each kind of policy they serve."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT_ROOT, require

from simulator.hot_modules import HOT_MODULES, compiled_count

COUNT = "from simulator.hot_modules import compiled_count; print(compiled_count())"


def _python(args: list[str], cwd: Path, pure: bool) -> str:
    """Run the advisor's Python in ``cwd``: the installed (compiled) modules, or with ``pure``
    the source tree first on the path."""
    env = dict(os.environ)
    if pure:
        env["PYTHONPATH"] = str(PROJECT_ROOT)
    done = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def compiled_install() -> None:
    require(
        compiled_count() == len(HOT_MODULES),
        "the hot modules run as pure Python here (an editable install, or no C compiler): "
        "`pip install .` compiles them",
    )


@pytest.mark.parametrize(
    "policy", ["random", "bandit-computer", "bandit-system", "replicas-bandit"]
)
def test_compiled_and_pure_python_replays_are_identical(
    compiled_install: None, policy: str, tmp_path: Path
) -> None:
    jobs = {}
    for pure in (False, True):
        out = tmp_path / ("pure" if pure else "compiled")
        ran = _python(["-c", COUNT], tmp_path, pure).strip()
        assert ran == ("0" if pure else str(len(HOT_MODULES)))
        replay = ["-m", "advisor.cli", "replay", "--scenario", "campus", "--days", "30"]
        replay += ["--scale", "0.2", "--seed", "3", "--policy", policy, "--out", str(out)]
        _python(replay, tmp_path, pure)
        jobs[pure] = (out / "jobs.csv").read_bytes()
    assert jobs[False] == jobs[True]
    assert jobs[False].count(b"\n") > 100  # a real replay, not two empty files
