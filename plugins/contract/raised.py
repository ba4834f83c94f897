"""Where an exception was raised, for the one-line errors about a policy's own code.

A site's policy that fails (at import, in ``advise``) is a bug in a file the administrator can
open: the line says which file and line, and the traceback stays for ``--log-level DEBUG``.
"""

from __future__ import annotations

import traceback


def raised_at(exc: BaseException, outside: str | None = None) -> str:
    """`` at FILE:LINE`` of the innermost frame that is neither Python's import machinery nor
    in the file ``outside`` (the caller's own), or nothing."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" at {exc.filename}:{exc.lineno}"
    frames = [
        (frame.f_code.co_filename, line)
        for frame, line in traceback.walk_tb(exc.__traceback__)
        if not frame.f_code.co_filename.startswith("<frozen")
        and "importlib" not in frame.f_code.co_filename
        and frame.f_code.co_filename != outside
    ]
    return f" at {frames[-1][0]}:{frames[-1][1]}" if frames else ""
