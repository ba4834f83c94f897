"""Log lines for conditions that recur every cycle: a pool that does not answer, a view too old
to advise on, a sink the pool refuses. Each is said when it begins, again when what is said
changes or after ``every_s``, and once when it ends, so an hour's outage is a few lines in the
journal rather than one a cycle (its metrics count every cycle)."""

from __future__ import annotations

import logging


class Recurring:
    def __init__(self, logger: logging.Logger, every_s: float = 3600.0) -> None:
        self.log = logger
        self.every_s = every_s
        self.said: dict[str, tuple[str, float]] = {}
        """Per condition, what was last said of it and when."""

    def say(self, key: str, text: str, now: float, level: int = logging.WARNING) -> None:
        last = self.said.get(key)
        if last is None or last[0] != text or now - last[1] >= self.every_s:
            self.said[key] = (text, now)
            self.log.log(level, "%s", text)

    def ended(self, key: str, text: str) -> None:
        """The condition ``key`` is over: ``text`` says so, if its beginning was said."""
        if self.said.pop(key, None) is not None:
            self.log.info("%s", text)
