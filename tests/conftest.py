"""Shared fixtures: where the real data lives, and the rule that it never skips under CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent


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
