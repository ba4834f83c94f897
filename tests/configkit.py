"""The shipped example configuration as a test can check it: its token file exists only on a
deployed central manager, so a copy points ``pool.token_file`` at a token made for the test;
and a pool source for reload tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "advisor.yaml"
TOKEN_LINE = re.compile(rb"^(\s*token_file:\s*)\S+", re.MULTILINE)


def with_token(data: bytes, token: Path) -> bytes:
    """``data`` (the example or a variant) with its ``token_file`` set to ``token``."""
    changed, count = TOKEN_LINE.subn(lambda m: m.group(1) + str(token).encode(), data, count=1)
    assert count == 1, "the example sets pool.token_file"
    return changed


def example_with_token(directory: Path) -> Path:
    """A copy of the example in ``directory`` whose token file exists there."""
    token = directory / "advisor.token"
    token.write_text("eyJhbGciOiJIUzI1NiJ9.test.token\n")
    token.chmod(0o600)
    path = directory / "advisor.yaml"
    path.write_bytes(with_token(EXAMPLE.read_bytes(), token))
    return path


class Quiet:
    """A pool source with nothing to say (a configuration reload never polls)."""

    def poll(self, now: float) -> Any:
        raise AssertionError("not polled")

    def cursor(self) -> dict[str, Any]:
        return {}

    def restore(self, cursor: Any) -> None:
        pass
