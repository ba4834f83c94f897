"""A command loads only what it needs: the daemon must not pay seconds of CPU for the simulator,
the research bench, matplotlib or scikit-learn before it even parses its arguments."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from advisor.cli import COMMANDS, USER_ERRORS, main

HEAVY = ("matplotlib", "sklearn", "scipy", "simulator", "advisor.lab")
LOADED = """
import contextlib, io, sys
from advisor.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(sys.argv[1:])
print(*sys.modules)
"""


def heavy_modules_after(*argv: str) -> list[str]:
    """The heavy modules in ``sys.modules`` once a fresh interpreter has run the command."""
    run = subprocess.run(
        [sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, check=True
    )
    return sorted(
        m for m in run.stdout.split() if any(m == h or m.startswith(f"{h}.") for h in HEAVY)
    )


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["run", "--help"], ["check-config", "--help"], ["explain", "--help"]],
    ids=" ".join,
)
def test_the_daemons_commands_start_without_heavy_modules(argv: list[str]) -> None:
    assert heavy_modules_after(*argv) == []


def test_policies_lists_without_heavy_modules() -> None:
    assert heavy_modules_after("policies") == []


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_registers_its_arguments(command: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert f"usage: htcondor-advisor {command}" in capsys.readouterr().out


def test_user_errors_name_real_exception_classes() -> None:
    """The one-line error mapping names classes by module; a rename must not disable it."""
    for module, name in USER_ERRORS:
        assert issubclass(getattr(importlib.import_module(module), name), Exception)
