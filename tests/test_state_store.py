"""Snapshots: atomic and private, versioned, pruned, and a corrupt one never stops a start."""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from advisor.condor.journal import Journal
from advisor.daemon.config import check_config
from advisor.daemon.fields import ConfigError
from advisor.daemon.runtime import Daemon
from advisor.daemon.state_store import StateStore, private_directory, read_snapshot
from advisor.lab.journal_read import read_events
from advisor.ports import Observation
from plugins.contract.advice import Advice
from plugins.contract.events import OwnerSessionStarted
from plugins.contract.policy import MachineInfo, Policy, PolicyContext, PoolView


def test_save_is_private_pruned_and_leaves_no_temporaries(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state", keep=3)
    for i in range(5):
        store.save({"n": i, "inf": float("inf")}, now=100.0 + i)
    names = sorted(p.name for p in store.directory.iterdir())
    assert names == ["snapshot-00000003.json", "snapshot-00000004.json", "snapshot-00000005.json"]
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700
    for path in store.directory.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    loaded = StateStore(store.directory).load_newest()
    assert loaded is not None and loaded.state["n"] == 4 and loaded.saved_at == 104.0


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "unreadable"),
        (lambda p: p.write_text(p.read_text().replace('"n":1', '"n":7')), "checksum mismatch"),
        (lambda p: p.write_text(p.read_text().replace('"version":1', '"version":9')), "version 9"),
        (lambda p: p.write_text('{"hello": 1}'), "not an htcondor-advisor snapshot"),
        (lambda p: p.write_bytes(b"\x80\x04\x95pickle"), "unreadable"),
    ],
)
def test_corrupt_newest_is_reported_and_the_previous_one_loaded(
    tmp_path: Path, damage, reason: str
) -> None:
    store = StateStore(tmp_path)
    store.save({"n": 0}, 1.0)
    newest = store.save({"n": 1}, 2.0)
    damage(newest)
    loaded = StateStore(tmp_path).load_newest()
    assert loaded is not None and loaded.state == {"n": 0}
    assert loaded.skipped and reason in loaded.skipped[0]
    with pytest.raises(ValueError, match=reason.split()[0]):
        read_snapshot(newest)


def test_a_write_interrupted_before_rename_leaves_the_old_snapshot(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.save({"n": 0}, 1.0)
    # what a crash between write and rename leaves behind: a partial temporary file
    (tmp_path / ".snapshot-00000002.json.999.tmp").write_text('{"format": "htcondor-adv')
    loaded = StateStore(tmp_path).load_newest()
    assert loaded is not None and loaded.state == {"n": 0} and loaded.skipped == []
    assert store.save({"n": 1}, 2.0).name == "snapshot-00000002.json"


def test_nothing_valid_means_a_fresh_start(tmp_path: Path) -> None:
    (tmp_path / "snapshot-00000001.json").write_text(json.dumps({"format": "x"}))
    store = StateStore(tmp_path)
    assert store.load_newest() is None
    assert len(store.skipped) == 1


# -- the daemon at start: orphans, snapshots that do not restore, modes ---------------------------


class Counting(Policy):
    """Learns a count per machine; its state has the shape ``{"agent": {"seen": {...}}}``."""

    NAME = "counting"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: dict[str, int] = {}
        self.loads = 0

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice()

    def state_dict(self) -> dict[str, Any]:
        return {"agent": {"seen": dict(self.seen)}, "loads": self.loads}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.loads = int(state["loads"])  # mutates first, then may fail: resume must undo it
        self.seen = dict(state["agent"]["seen"])


class Quiet:
    """A pool source with a cursor and nothing to say."""

    def __init__(self) -> None:
        self.position = 0

    def poll(self, now: float) -> Observation:
        return Observation([], PoolView(machines=(), idle_jobs_by_prior_hours=()))

    def cursor(self) -> dict[str, Any]:
        return {"position": self.position}

    def restore(self, cursor: Mapping[str, Any]) -> None:
        self.position = int(cursor["position"])


def _daemon(directory: Path, policy: str = "counting") -> Daemon:
    config = check_config(
        {
            "pool": {"kind": "condor", "collector": "cm:9618"},
            "state": {"directory": str(directory), "keep": 3},
        }
    )
    cls = Counting if policy == "counting" else type("Other", (Counting,), {"NAME": policy})
    return Daemon(config, cls(PolicyContext(machines={})), Quiet(), [], lambda: 1000.0)


def _learned(daemon: Daemon, seen: dict[str, int], position: int) -> None:
    daemon.host.policy.seen = dict(seen)  # type: ignore[attr-defined]
    daemon.host.policy.loads = 1  # type: ignore[attr-defined]
    daemon.host.source.position = position  # type: ignore[attr-defined]


def _bad_shape(daemon: Daemon, now: float) -> Path:
    """A snapshot with a valid checksum whose policy state lacks its ``agent``."""
    state = daemon.host.snapshot()
    state["policy"]["state"] = {"loads": 7}
    state["cursor"] = {"position": 99}
    return daemon.store.save(state, now)


def test_orphan_temporaries_are_removed_at_start_and_only_then(tmp_path: Path) -> None:
    _daemon(tmp_path).snapshot(1.0)
    orphan = tmp_path / ".snapshot-00000002.json.999999.tmp"
    orphan.write_text('{"format": "htcondor-adv')
    assert StateStore(tmp_path).load_newest() is not None
    assert orphan.exists()  # a reader (explain, the crash bench) never removes anything
    daemon = _daemon(tmp_path)
    assert daemon.resume() is not None
    assert not orphan.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot-00000001.json"]


def test_a_snapshot_that_does_not_restore_is_set_aside_for_the_previous_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = _daemon(tmp_path)
    _learned(first, {"a": 2}, position=5)
    good = first.snapshot(100.0)
    assert good is not None
    bad = _bad_shape(first, 200.0)
    again = _daemon(tmp_path)
    with caplog.at_level(logging.INFO):
        state = again.resume()
    assert state is not None and again.host.policy.seen == {"a": 2}  # type: ignore[attr-defined]
    assert again.host.source.position == 5  # type: ignore[attr-defined]
    assert "cannot be restored (KeyError: 'agent')" in caplog.text
    assert f"resumed from {good.name}" in caplog.text
    assert not bad.exists() and (tmp_path / "unusable" / bad.name).exists()
    assert again.snapshot(300.0) == tmp_path / "snapshot-00000002.json"


def test_when_no_snapshot_is_usable_the_start_is_fresh_and_they_are_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = _daemon(tmp_path)
    _learned(first, {"a": 2}, position=5)
    bad = [_bad_shape(first, 100.0), _bad_shape(first, 200.0)]
    corrupt = first.snapshot(300.0)
    assert corrupt is not None
    corrupt.write_text(corrupt.read_text().replace('"a":2', '"a":3'))
    again = _daemon(tmp_path)
    with caplog.at_level(logging.INFO):
        assert again.resume() is None
    policy = again.host.policy
    assert policy.seen == {} and policy.loads == 0  # type: ignore[attr-defined]  # undone
    assert again.host.source.position == 0  # type: ignore[attr-defined]
    assert "no usable snapshot" in caplog.text and "3 moved to unusable/" in caplog.text
    assert "skipping corrupt snapshot" in caplog.text and "checksum mismatch" in caplog.text
    aside = sorted(p.name for p in (tmp_path / "unusable").iterdir())
    assert aside == sorted(p.name for p in [*bad, corrupt])
    for i in range(5):  # pruning never reaches them
        again.snapshot(400.0 + i)
    assert len(list((tmp_path / "unusable").iterdir())) == 3
    assert len(again.store.snapshots()) == 3


def test_a_snapshot_of_another_policy_stops_the_start(tmp_path: Path) -> None:
    _daemon(tmp_path, "other").snapshot(100.0)
    with pytest.raises(ConfigError, match="snapshot is of policy 'other', configured is"):
        _daemon(tmp_path).resume()
    assert (tmp_path / "snapshot-00000001.json").exists()  # valid: left where it is


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("open_umask")
def test_modes_are_private_whatever_the_umask(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "new")
    path = store.save({"n": 1}, 1.0)
    assert _mode(store.directory) == 0o700 and _mode(path) == 0o600
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o755)
    (ours / "snapshot-00000001.json").write_text("{}")
    StateStore(ours)
    assert _mode(ours) == 0o755  # a reader (explain --state-dir) changes nothing
    private_directory(ours, tighten=True)  # the daemon at start
    assert _mode(ours) == 0o700  # only the advisor's files: tightened
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    (shared / "someone-else").write_text("x")
    private_directory(shared, tighten=True)
    assert _mode(shared) == 0o755  # a directory of others' files is left alone, with a warning


@pytest.mark.usefixtures("open_umask")
def test_the_journal_is_private_whatever_the_umask(tmp_path: Path) -> None:
    state = tmp_path / "state"
    journal = Journal(state)
    journal.append([OwnerSessionStarted(1.0, "m1")], 1.0)
    journal.save_machines({"m1": MachineInfo("m1", "lab", "Normal", 57, 40, 2)})
    assert _mode(state) == 0o700 and _mode(journal.dir) == 0o700
    assert _mode(journal.dir / "events.jsonl") == 0o600
    assert _mode(journal.dir / "machines.json") == 0o600
    os.chmod(journal.dir / "events.jsonl", 0o644)  # as an earlier version left it
    Journal(state)
    assert _mode(journal.dir / "events.jsonl") == 0o600
    assert [type(e).__name__ for e in read_events(state)] == ["OwnerSessionStarted"]


def test_a_state_json_cannot_hold_is_one_line_naming_the_fix_and_writes_nothing(
    tmp_path: Path,
) -> None:
    store = StateStore(tmp_path)
    with pytest.raises(ConfigError) as caught:
        store.save({"policy": {"state": {"seen": {"pc1", "pc2"}}}}, 1000.0)  # a site's set
    said = str(caught.value)
    assert "cannot be saved as JSON (TypeError: Object of type set is not JSON" in said
    assert "state_dict() returns only dicts, lists" in said and "\n" not in said
    assert list(tmp_path.iterdir()) == []


def test_a_state_the_poll_changes_while_it_is_saved_is_saved_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the snapshot thread serialises live objects of the source and the policy; hashing lets the
    # poll's thread run, and the state was serialised again afterwards to be written: the newest
    # snapshot then failed its own checksum at the next start
    import advisor.daemon.state_store as module

    live: dict[str, Any] = {"running": {"1.0": 100.0}}
    real_digest = module._digest

    def poll_meanwhile(state: Any) -> str:
        digest = real_digest(state)
        live["running"]["2.0"] = 200.0  # an attempt the poll saw start
        return digest

    monkeypatch.setattr(module, "_digest", poll_meanwhile)
    store = StateStore(tmp_path)
    store.save({"queue": live}, now=1.0)
    monkeypatch.setattr(module, "_digest", real_digest)
    loaded = store.load_newest()
    assert loaded is not None and loaded.skipped == []
    assert loaded.state == {"queue": {"running": {"1.0": 100.0}}}
