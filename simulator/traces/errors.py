"""The one error type of the trace readers.

A trace that is wrong must say where (file, line, field) and what was expected, so a user can fix
the file; readers never skip what they cannot read.
"""

from __future__ import annotations

from os import PathLike


class TraceError(ValueError):
    """A trace file does not match its format: ``path:line: field 'f': expected X, got 'Y'``."""

    def __init__(
        self,
        path: str | PathLike[str],
        line: int | None,
        field: str | None,
        expected: str,
        got: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.expected = expected
        self.got = got
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [where]
        if self.field is not None:
            parts.append(f"field {self.field!r}")
        what = f"expected {self.expected}"
        if self.got is not None:
            what += f", got {_short(self.got)!r}"
        parts.append(what)
        return ": ".join(parts)

    def __reduce__(self) -> tuple[type[TraceError], tuple[object, ...]]:
        # Keeps the error picklable (multiprocessing workers re-raise it in the parent).
        return (TraceError, (self.path, self.line, self.field, self.expected, self.got))


def _short(text: str, limit: int = 80) -> str:
    """Long offending values (a whole garbled line) are cut so the message stays readable."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
