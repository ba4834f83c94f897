"""The journal keeps ``pool.journal_keep`` of events: older ones are cut off a month late, and a
place in it (a snapshot's ``journal_bytes``) still means the same events afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.condor.journal import Journal, events_file
from advisor.lab.journal_read import read_events
from plugins.contract.clock import DAY as DAY_S
from plugins.contract.events import OwnerSessionEnded, OwnerSessionStarted


def _day(journal: Journal, day: int) -> None:
    t = day * DAY_S
    journal.append(
        [OwnerSessionStarted(t + 3600, "pc1"), OwnerSessionEnded(t + 7200, "pc1")], t + 7200
    )


def test_events_past_keeping_are_cut_off_a_month_late_and_places_keep_their_meaning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(tmp_path, keep_s=10 * DAY_S)
    for day in range(40):  # the oldest is 39 days old: within keeping and the month's slack
        _day(journal, day)
    assert events_file(journal.dir) == (journal.dir / "events.jsonl", 0)
    size = journal.size()
    place = size // 2  # a snapshot's place, halfway
    before = list(read_events(tmp_path, place))
    with caplog.at_level("INFO", "htcondor_advisor.condor"):
        _day(journal, 41)  # now 41 days: past 10 + 30, cut to the last 10
    path, cut = events_file(journal.dir)
    assert path.name == f"events-from-{cut}.jsonl" and cut > 0
    assert sorted(p.name for p in journal.dir.glob("events*")) == [path.name]
    assert "cut off" in caplog.text
    assert journal.size() > size  # places count the bytes cut off too
    kept = list(read_events(tmp_path))
    cutoff = 31 * DAY_S + 7200  # 10 days before the newest event
    assert min(e.time for e in kept) == cutoff  # day 31's logout; its login was cut off
    assert len(kept) == 1 + 2 * 8 + 2  # that logout, days 32 to 39, and day 41
    assert journal.size() == cut + path.stat().st_size
    # the snapshot's place: what is kept of the events before it, the same events
    assert list(read_events(tmp_path, place)) == [e for e in before if e.time >= cutoff]
    # a restart finds the trimmed file, and appends after it
    again = Journal(tmp_path, keep_s=10 * DAY_S)
    assert (again.path, again.base, again.size()) == (path, cut, journal.size())
    _day(again, 42)
    assert list(read_events(tmp_path))[-1] == OwnerSessionEnded(42 * DAY_S + 7200, "pc1")


def test_a_trim_cut_short_by_a_crash_keeps_the_newer_file(tmp_path: Path) -> None:
    journal = Journal(tmp_path, keep_s=7 * DAY_S)
    for day in range(50):
        _day(journal, day)
    path = events_file(journal.dir)[0]
    (journal.dir / "events.jsonl").write_text(path.read_text())  # as if not yet removed
    (journal.dir / "events-from-1.tmp").write_text("{")  # a copy cut short
    assert Journal(tmp_path).path == path
    assert sorted(p.name for p in journal.dir.glob("events*")) == [path.name]


def test_without_a_limit_nothing_is_cut(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    for day in range(0, 4000, 50):
        _day(journal, day)
    assert events_file(journal.dir) == (journal.dir / "events.jsonl", 0)
    assert len(list(read_events(tmp_path))) == 2 * 80


def test_a_host_clock_years_ahead_cuts_nothing(tmp_path: Path) -> None:
    journal = Journal(tmp_path, keep_s=10 * DAY_S)
    _day(journal, 0)
    journal.append([OwnerSessionStarted(5000 * DAY_S, "pc2")], now=DAY_S)  # by the daemon's clock
    _day(journal, 2)
    assert events_file(journal.dir)[1] == 0 and len(list(read_events(tmp_path))) == 5
