"""Journald-friendly logging: one line per record on stderr, no timestamp (the journal adds one),
and a ``<N>`` syslog priority prefix when stderr is connected to the journal. Times a message
names are ISO 8601 UTC (``iso``), never raw seconds since the epoch."""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime

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
    # the scheduler says "Running job ..." twice per job and interval at INFO: a journal line a
    # second on a 60 s pool; its warnings (a missed run) still show, everything under DEBUG
    quiet = root.getEffectiveLevel() > logging.DEBUG
    logging.getLogger("apscheduler").setLevel(logging.WARNING if quiet else logging.NOTSET)
    if os.environ.get("JOURNAL_STREAM"):
        for handler in root.handlers:
            handler.setFormatter(JournalFormatter("%(message)s"))


def iso(t: float) -> str:
    """``t`` (seconds since the epoch) as ``2026-11-25T04:09:00Z``, to the nearest second."""
    return datetime.fromtimestamp(round(t), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
