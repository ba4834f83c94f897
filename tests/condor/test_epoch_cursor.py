"""The schedd reader's epoch cursor: nothing missed when shadows append out of order, nothing
twice, and a snapshot cursor resumes the same way.

The schedd here is an epoch file in memory with ``jobEpochHistory``'s reading rule (newest
appended first, stop at the first ad matching ``since``): the out-of-order append this guards
against cannot be forced on the real pool, whose tests cover the reader end to end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from advisor.condor.retry import Backoff
from advisor.condor.schedd_reader import EPOCH_REREAD_S, ScheddReader


class EpochFile:
    def __init__(self) -> None:
        self.ads: list[dict[str, Any]] = []

    def append(self, cluster: int, written: float) -> None:
        self.ads.append({"ClusterId": cluster, "ProcId": 0, "EpochWriteDate": written})

    def jobEpochHistory(self, projection: list[str], since: str | None) -> list[Mapping[str, Any]]:
        limit = float(since.split("<")[1]) if since else None
        found = []
        for ad in reversed(self.ads):
            if limit is not None and ad["EpochWriteDate"] < limit:
                break
            found.append(ad)
        return found


def clusters(ads: list[Mapping[str, Any]]) -> list[int]:
    return sorted(ad["ClusterId"] for ad in ads)


def reader(file: EpochFile) -> ScheddReader:
    return ScheddReader("schedd", lambda: file, Backoff("schedd"))


def test_an_ad_appended_after_a_later_one_is_still_read_once() -> None:
    file = EpochFile()
    schedd = reader(file)
    file.append(1, 1000.0)
    file.append(2, 1002.0)  # shadow 2 wrote first ...
    assert clusters(schedd.epochs(1003.0) or []) == [1, 2]
    file.append(3, 1001.0)  # ... shadow 3 stamped earlier, appended later
    assert clusters(schedd.epochs(1004.0) or []) == [3]
    assert schedd.epochs(1005.0) == []


def test_the_window_forgets_what_it_can_no_longer_reread() -> None:
    file = EpochFile()
    schedd = reader(file)
    file.append(1, 1000.0)
    schedd.epochs(1001.0)
    file.append(2, 1000.0 + 2 * EPOCH_REREAD_S)
    assert clusters(schedd.epochs(1002.0) or []) == [2]
    assert set(schedd.seen) == {"2.0.0"}


def test_a_resumed_cursor_reports_nothing_twice() -> None:
    file = EpochFile()
    first = reader(file)
    file.append(1, 1000.0)
    file.append(2, 1000.0)
    first.epochs(1001.0)
    again = reader(file)
    again.load(first.state())
    file.append(3, 999.0)
    assert clusters(again.epochs(1002.0) or []) == [3]
    old = reader(file)
    old.load({"cursor_time": 1000.0, "cursor_ids": ["1.0.0", "2.0.0", "3.0.0"]})  # older format
    assert old.epochs(1003.0) == []


def test_an_attempt_s_ad_written_twice_in_one_second_is_read_once() -> None:
    """Ads that tie are not compared (that raised ``TypeError``), and an attempt's ad found twice
    in one read counts once (docs/live-daemon.md, "A job is named on its schedd")."""
    file = EpochFile()
    schedd = reader(file)
    file.append(4, 1000.0)
    file.append(4, 1000.0)
    file.append(5, 1000.0)
    assert clusters(schedd.epochs(1001.0) or []) == [4, 5]


def test_the_same_job_of_two_schedds_in_one_file_is_read_as_two_attempts() -> None:
    """Two schedds on a host share the epoch file; ``1.0`` of each differs by its schedd."""
    file = EpochFile()
    schedd = reader(file)
    file.append(1, 1000.0)
    file.append(1, 1000.0)
    for ad, name in zip(file.ads, ("vm", "ap2@ap2.advisor.test"), strict=True):
        ad["GlobalJobId"] = f"{name}#1.0#1796000000"
    assert clusters(schedd.epochs(1001.0) or []) == [1, 1]
    assert schedd.epochs(1002.0) == []


def test_a_cursor_saved_before_identities_named_their_schedd_reports_nothing_twice() -> None:
    file = EpochFile()
    file.append(1, 1000.0)
    file.ads[0]["GlobalJobId"] = "schedd#1.0#1796000000"
    upgraded = reader(file)
    upgraded.load({"cursor_time": 1000.0, "seen": [["1.0.0", 1000.0]]})  # as saved before
    assert upgraded.epochs(1001.0) == []
