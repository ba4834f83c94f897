"""Journald-friendly logging: one line per record on stderr, no timestamp (the journal adds one),
and a ``<N>`` syslog priority prefix when stderr is connected to the journal."""

from __future__ import annotations

import logging
import os

PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3}


class JournalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        prio = PRIORITY.get(record.levelno, 2 if record.levelno > logging.ERROR else 6)
        return f"<{prio}>{record.name}: {super().format(record)}"


def setup_daemon_logging(level: str | None) -> None:
    """Apply the configured level (None: keep ``--log-level``); journal priorities under systemd."""
    root = logging.getLogger()
    if level is not None:
        root.setLevel(level)
    if os.environ.get("JOURNAL_STREAM"):
        for handler in root.handlers:
            handler.setFormatter(JournalFormatter("%(message)s"))
