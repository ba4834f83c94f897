"""A disk that fills: a snapshot is written whole or not at all, and the journal keeps no torn
line, while the daemon goes on serving and the policy still sees every poll's events.

The disk fills for real in a forked child: ``RLIMIT_FSIZE`` lets no file grow past a size, so
a write across it writes what fits and says how much, and the next one fails (EFBIG; SIGXFSZ is
ignored, as a full disk raises no signal), as ENOSPC does on a full file system.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import resource
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.condor.factory import machine_inventory
from advisor.condor.journal import Journal
from advisor.condor.retry import Backoff
from advisor.condor.source import CondorPoolSource
from advisor.daemon.config import check_config
from advisor.daemon.runtime import Daemon
from advisor.daemon.state_store import StateStore
from advisor.lab.journal_read import read_events, read_machines
from advisor.ports import Observation
from plugins.contract.advice import Advice
from plugins.contract.events import Event, OwnerSessionEnded, OwnerSessionStarted
from plugins.contract.policy import Policy, PolicyContext, PoolView


@contextlib.contextmanager
def disk_full_past(size: int) -> Iterator[None]:
    """No file grows past ``size`` bytes inside (call in a child only: see ``in_child``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def in_child(work: Callable[[], Any]) -> dict[str, Any]:
    """``work()`` in a forked child (the limit must not reach pytest's own files): what it
    returned or raised, and the lines it logged."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        os.close(reader)
        said: dict[str, Any] = {"logged": []}
        handler = logging.Handler(logging.INFO)
        handler.emit = lambda record: said["logged"].append(record.getMessage())  # type: ignore[method-assign]
        logging.getLogger().addHandler(handler)
        logging.getLogger().setLevel(logging.INFO)
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            said["returned"] = work()
        except BaseException as exc:
            said["raised"] = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(writer, json.dumps(said, default=str).encode())
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        text = pipe.read()
    os.waitpid(pid, 0)
    result: dict[str, Any] = json.loads(text)
    return result


# -- snapshots -----------------------------------------------------------------------------------


def test_a_snapshot_the_disk_cannot_hold_fails_and_the_older_ones_stay(tmp_path: Path) -> None:
    store = StateStore(tmp_path, keep=3)
    for i in range(3):
        store.save({"n": i, "pad": "x" * 20000}, 100.0 + i)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def fill() -> list[str | None]:
        raised = []
        with disk_full_past(10000):
            for i in range(3, 6):  # as many as it keeps: each used to push a good one out
                try:
                    store.save({"n": i, "pad": "x" * 20000}, 100.0 + i)
                except OSError as exc:
                    raised.append(exc.strerror)
        return raised

    child = in_child(fill)
    assert child.get("returned") == ["File too large"] * 3, child
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no temporary left
    loaded = StateStore(tmp_path).load_newest()
    assert loaded is not None and loaded.state["n"] == 2 and loaded.skipped == []
    assert store.save({"n": 6}, 200.0).name == "snapshot-00000004.json"  # space freed


class Counting(Policy):
    NAME = "counting"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice()

    def state_dict(self) -> dict[str, Any]:
        return {"pad": "x" * 20000}

    def load_state(self, state: Mapping[str, Any]) -> None:
        pass


class Quiet:
    def poll(self, now: float) -> Observation:
        return Observation([], PoolView(machines=(), idle_jobs_by_prior_hours=()))

    def cursor(self) -> dict[str, Any]:
        return {}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        pass


def test_the_daemon_says_a_snapshot_was_not_written_in_one_line_and_serves_on(
    tmp_path: Path,
) -> None:
    config = check_config(
        {"pool": {"kind": "condor", "collector": "cm:9618"}, "state": {"directory": str(tmp_path)}}
    )
    daemon = Daemon(config, Counting(PolicyContext(machines={})), Quiet(), [], lambda: 1000.0)
    daemon.snapshot(100.0)

    def fill() -> dict[str, Any]:
        with disk_full_past(10000):
            path = daemon.snapshot(200.0)
            last = daemon.metrics.last_snapshot
            daemon.host.cycle(300.0)  # serving goes on
        return {"path": path, "last": last, "cycles": daemon.host.cycles}

    child = in_child(fill)
    assert child.get("returned") == {"path": None, "last": 100.0, "cycles": 1}, child
    assert [line for line in child["logged"] if "snapshot" in line] == [
        f"snapshot not written: File too large ({tmp_path}); the older snapshots are kept"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot-00000001.json"]


# -- the journal ---------------------------------------------------------------------------------


def test_an_append_the_disk_cannot_hold_leaves_no_torn_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.append([OwnerSessionStarted(float(t), "pc1") for t in range(100)], 100.0)
    size = journal.size()

    def fill() -> None:
        with disk_full_past(size + 100):  # room for a line and a half of the 50
            for now in (250.0, 260.0):
                journal.append([OwnerSessionEnded(now + t, "pc1") for t in range(50)], now)
                assert journal.size() == size
        journal.append([OwnerSessionStarted(300.0, "pc2")], 300.0)  # space freed
        journal.append([OwnerSessionEnded(400.0, "pc2")], 400.0)

    child = in_child(fill)
    assert "raised" not in child, child
    assert child["logged"] == [
        "journal: events of this poll are not journalled: File too large "
        f"({journal.path}); the policy still sees them",  # once, not at every poll
        "journal: written again; 2 poll(s) were not journalled",
    ]
    events = list(read_events(tmp_path))
    assert events[:100] == [OwnerSessionStarted(float(t), "pc1") for t in range(100)]
    assert events[100:] == [OwnerSessionStarted(300.0, "pc2"), OwnerSessionEnded(400.0, "pc2")]


def _ads(state: str, keyboard_idle: float, at: float) -> Callable[[], list[Mapping[str, Any]]]:
    return lambda: [
        {
            "Name": f"slot1@pc{i}",
            "Machine": f"pc{i}",
            "State": state,
            "Activity": "Idle",
            "MyCurrentTime": at,
            "KeyboardIdle": keyboard_idle,
            "Cpus": 4,
            "Memory": 8000,
            "SlotType": "Static",
            "EnteredCurrentState": at - 10,
        }
        for i in range(3)
    ]


def test_a_poll_on_a_full_disk_gives_the_policy_its_events(tmp_path: Path) -> None:
    watts = {"active": 57.0, "idle": 40.0, "sleep": 2.0}
    source = CondorPoolSource(
        _ads("Owner", 5, 1000.0),
        [],
        machine_inventory(watts, {}),
        Backoff("collector"),
        journal=Journal(tmp_path),
    )

    def fill() -> list[list[str]]:
        seen: list[Sequence[Event]] = []
        with disk_full_past(10):
            seen.append(source.poll(1000.0).events)
        source.query_startds = _ads("Unclaimed", 2000, 3000.0)
        seen.append(source.poll(3000.0).events)
        return [[repr(e) for e in events] for events in seen]

    child = in_child(fill)
    started = [repr(OwnerSessionStarted(990.0, f"pc{i}")) for i in range(3)]
    ended = [OwnerSessionEnded(2990.0, f"pc{i}") for i in range(3)]
    assert child.get("returned") == [started, [repr(e) for e in ended]], child
    assert list(read_events(tmp_path)) == ended
    assert sorted(read_machines(tmp_path)) == ["pc0", "pc1", "pc2"]  # saved once it could be
    journal = tmp_path / "condor-journal"
    machines, events = journal / "machines.json", journal / "events.jsonl"
    assert child["logged"] == [
        f"journal: machines not saved: File too large ({machines}); tried again at the next poll",
        f"journal: events of this poll are not journalled: File too large ({events}); the "
        "policy still sees them",
        "journal: written again; 1 poll(s) were not journalled",
    ]
    assert sorted(p.name for p in journal.iterdir()) == ["events.jsonl", "machines.json"]
