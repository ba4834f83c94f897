"""Progress bars on stderr, drawn only where someone watches them.

A bar redraws itself with carriage returns: on a terminal that is one line that moves; in a
pipe, a log file or captured output it is noise, a fragment per redraw. Every bar of the
commands and the bench is made here, so the rule is one: a bar is drawn when its caller wants
one (``--no-progress`` says it does not) and stderr is a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm


def on_terminal(wanted: bool = True) -> bool:
    """Whether a bar is drawn: ``wanted``, and stderr a terminal (not None, nor closed)."""
    try:
        return wanted and sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr (None), or a closed one
        return False


def terminal_bar(
    iterable: Iterable[Any] | None = None, *, wanted: bool = True, **options: Any
) -> Any:
    """A tqdm bar on stderr; where ``on_terminal`` says no, one that draws nothing (its
    iteration and ``update`` still work, so callers need no second path)."""
    return tqdm(iterable, disable=not on_terminal(wanted), **options)
