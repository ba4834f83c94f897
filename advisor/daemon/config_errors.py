"""Every mistake in a configuration at once: checks record their one-line errors and go on.

Each check still raises its ConfigError (the key path, the value, the fix); ``Problems`` records
it and hands back ``FAILED`` in place of the value, so a check that needs that value skips (an
unknown policy's options cannot be checked) instead of adding errors that only echo the first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from advisor.daemon import fields as f
from plugins.contract.yaml_text import one_line

T = TypeVar("T")


class _Failed:
    def __repr__(self) -> str:
        return "<failed check>"


FAILED: Any = _Failed()
"""What a value that failed its check holds (test with ``is FAILED``)."""


class ConfigErrors(f.ConfigError):
    """Several errors; the message has one line per error, each naming its key path."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class Problems:
    """The errors found so far, in the order of the document."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, error: f.ConfigError) -> None:
        """Record ``error`` (each of its lines, when it is several already)."""
        if isinstance(error, ConfigErrors):
            self.lines.extend(error.lines)
        else:
            self.lines.append(one_line(str(error)))

    def check(self, check: Callable[..., T], *args: Any) -> T:
        """``check(*args)``, or FAILED once the ConfigError it raised is recorded."""
        try:
            return check(*args)
        except f.ConfigError as exc:
            self.add(exc)
            result: T = FAILED
            return result

    def raise_any(self) -> None:
        """Raise every recorded error as one ConfigErrors (nothing when there is none)."""
        if self.lines:
            raise ConfigErrors(list(self.lines))
