"""Shared fixtures: where the real data lives, and the rule that it never skips under CI; and a
guard that the code under test is the source (a regular install is a copy, made at install)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from plugins.contract.policy import Policy

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("advisor", "plugins", "simulator")


def pytest_configure(config: pytest.Config) -> None:
    """Stop at once when the installed copy is older than the source (no test would see the
    edit): a regular install (``pip install .``) copies the modules, and compiles the hot ones."""
    import simulator

    installed = Path(simulator.__file__).resolve().parent.parent
    if installed == PROJECT_ROOT:
        return  # an editable install, or the source first on the path: the source itself
    stale = [
        str(source.relative_to(PROJECT_ROOT))
        for package in PACKAGES
        for source in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if not _same(source, installed / source.relative_to(PROJECT_ROOT))
    ]
    if stale:
        pytest.exit(
            f"the installed copy in {installed} differs from the source in {', '.join(stale[:5])}"
            f"{' ...' if len(stale) > 5 else ''}: install again (`.venv/bin/pip install "
            "'.[test]'`, or `bash .ci/run`), or use an editable install (`pip install -e .`)",
            returncode=4,
        )


def _same(source: Path, copy: Path) -> bool:
    return copy.is_file() and copy.read_bytes() == source.read_bytes()


def _data_dir() -> Path | None:
    env = os.environ.get("ADVISOR_DATA_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(PROJECT_ROOT.parent / "shared" / "data")
    for path in candidates:
        if path.is_dir():
            return path
    return None


def require(condition: bool, why: str) -> None:
    """Skip with ``why`` on a user's clone; fail under CI=true, where nothing may skip."""
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"required under CI=true: {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real traces of ../shared/data (or $ADVISOR_DATA_DIR)."""
    path = _data_dir()
    require(path is not None, "real data not found: set ADVISOR_DATA_DIR or place ../shared/data")
    assert path is not None
    return path


def register_policy(monkeypatch: pytest.MonkeyPatch, policy: type[Policy]) -> None:
    """Register a policy a test defines, as a site's package would by its entry point."""
    import plugins.contract.registry as registry

    class Registered:
        name = policy.NAME

        @staticmethod
        def load() -> type[Policy]:
            return policy

    real = registry.registered
    monkeypatch.setattr(registry, "registered", lambda: {**real(), policy.NAME: Registered()})
