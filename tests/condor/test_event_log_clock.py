"""A job event log written in local time repeats an hour when the clocks go back, and the
bindings read both passes of it as the first (``JobEvent.timestamp`` of a time without zone):
an attempt that ends in the second pass ended before it started, by the log."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import htcondor2
import pytest

from advisor.condor.event_log import EventLogAttempts
from plugins.contract.events import AttemptEnded

SCHEDD = "<127.0.0.1:9618?addrs=127.0.0.1-9618&alias=ap1.example.org&sock=schedd_1_a>"
HOST = "<127.0.0.1:9618?addrs=127.0.0.1-9618&alias=ep1.example.org&sock=startd_1_b>"
TERMINATED = "".join(
    f"\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  {what} Usage\n"
    for what in ("Run Remote", "Run Local", "Total Remote", "Total Local")
)


@pytest.fixture
def chicago(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "America/Chicago")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_an_attempt_across_the_repeated_hour_does_not_end_before_it_starts(
    chicago: None, tmp_path: Path
) -> None:
    log = tmp_path / "job.log"
    log.write_text(  # 01:50 CDT, then 01:10 CST: twenty minutes later
        f"000 (001.000.000) 2025-11-02 01:40:00 Job submitted from host: {SCHEDD}\n...\n"
        f"001 (001.000.000) 2025-11-02 01:50:00 Job executing on host: {HOST}\n...\n"
        f"005 (001.000.000) 2025-11-02 01:10:00 Job terminated.\n"
        f"\t(1) Normal termination (return value 0)\n{TERMINATED}...\n"
    )
    attempts = EventLogAttempts()
    events = [
        e for event in htcondor2.JobEventLog(str(log)).events(0) for e in attempts.feed(event)
    ]
    (ended,) = [e for e in events if isinstance(e, AttemptEnded)]
    assert ended.time >= ended.started
