"""Snapshots: atomic and private, versioned, pruned, and a corrupt one never stops a start."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from advisor.daemon.state_store import StateStore, read_snapshot


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
