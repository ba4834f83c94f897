"""A live idle policy starts from the models ``train-idle`` stored (``learning.idle_models``),
not neutral until its first retraining a month away and again after every restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from advisor.cli import main

TWIN = {"kind": "sim", "scenario": "campus", "days": 7, "scale": 0.05, "speed": "max"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("store") / "models"
    scenario = ["--scenario", "campus", "--scale", "0.05", "--days", "45"]
    train = ["train-idle", *scenario, "--until", "2010-02", "--policy", "idle-min"]
    assert main([*train, "--workers", "1", "--out", str(out)]) == 0
    return out


def twin(tmp_path: Path, name: str, learning: dict) -> Path:
    config = {
        "pool": TWIN,
        "policy": {"name": "idle-min"},
        "publish": {"listen": "127.0.0.1:0"},
        "learning": learning,
        "state": {"directory": str(tmp_path / name / "state")},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["run", "--config", str(path), "--out", str(tmp_path / name)]) == 0
    return tmp_path / name


def test_a_twin_from_stored_models_advises_from_its_first_day(
    store: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("INFO"):
        warm = twin(tmp_path, "warm", {"idle_models": str(store)})
    cold = twin(tmp_path, "cold", {})
    assert "idle-min/1 starts from the models of" in caplog.text
    assert "71 models; 0 of 71 machines have none yet" in caplog.text
    # the first week: the cold policy has no model yet, so it leaves the pool as random would
    assert (warm / "jobs.csv").read_text() != (cold / "jobs.csv").read_text()


def test_a_store_of_other_library_versions_is_said_and_left_out(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture
) -> None:
    """A routine upgrade of the host's packages must not stop the daemon (exit 2, which
    systemd does not restart): it goes on without the store, and says why in one line."""
    meta = json.loads((store / "meta.json").read_text())
    meta["libraries"]["scikit-learn"] = "0.1"
    other = tmp_path / "other"
    other.mkdir()
    (other / "meta.json").write_text(json.dumps(meta))
    (other / "models.pkl").write_bytes((store / "models.pkl").read_bytes())
    learning = {"idle_models": str(other)}
    raw = {"pool": TWIN, "policy": {"name": "idle-min"}, "learning": learning}
    config = tmp_path / "a.yaml"
    config.write_text(yaml.safe_dump(raw))
    assert main(["check-config", str(config)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "trained with scikit-learn 0.1, this is" in err[0]
    assert "its models are not loaded" in err[0]
    with caplog.at_level("INFO"):
        twin(tmp_path, "upgraded", learning)
    assert "trained with scikit-learn 0.1" in caplog.text and "starts from" not in caplog.text


@pytest.mark.parametrize(
    ("policy", "value", "said"),
    [
        (
            "frugal",
            "/srv/models",
            "learning.idle_models: policy 'frugal' takes no idle-time models",
        ),
        ("idle-min", "models", "learning.idle_models: 'models' is relative"),
    ],
)
def test_check_config_refuses_a_store_it_cannot_use(
    policy: str, value: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    config = tmp_path / "a.yaml"
    raw = {"pool": TWIN, "policy": {"name": policy}, "learning": {"idle_models": value}}
    config.write_text(yaml.safe_dump(raw))
    assert main(["check-config", str(config)]) == 2
    assert said in capsys.readouterr().err


def test_a_store_trained_for_other_reboots_is_refused_naming_the_fix(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Trained where every machine reboots at 03:00, the models predict every evening's idle
    period to end then: hours short on a pool whose machines do not reboot."""
    assert json.loads((store / "meta.json").read_text())["reboot_hour"] == 3
    config = tmp_path / "a.yaml"
    pool = {**TWIN, "reboot_hour": None}
    raw = {"pool": pool, "policy": {"name": "idle-min"}, "learning": {"idle_models": str(store)}}
    config.write_text(yaml.safe_dump(raw))
    assert main(["check-config", str(config)]) == 2
    said = capsys.readouterr().err
    assert "trained on machines that reboot at 03:00 UTC, pool.reboot_hour says they reboot" in said
    assert "never; train again with `htcondor-advisor train-idle ... --reboot-hour none" in said
