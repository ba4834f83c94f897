"""A store's models are usable only by a policy with the options that shaped them: ``features``
(the columns each model takes, in order) and ``group`` (how the models are keyed). A store of
other ones is refused at ``check-config`` and at ``run`` in one line, not left to raise a shape
error every cycle or to match no machine and advise nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from advisor.cli import main
from advisor.lab.model_store import ModelStoreError, warm_start
from plugins.contract.policy import PolicyContext
from plugins.idle.features import BEST_FEATURES
from plugins.idle.policy import IdleMinPolicy

TWIN = {"kind": "sim", "scenario": "campus", "days": 3, "scale": 0.05, "speed": "max"}
NARROW = "hourOfDay,dayOfWeek"
DEFAULT = ",".join(BEST_FEATURES)


def train(out: Path, *sets: str) -> Path:
    scenario = ["--scenario", "campus", "--scale", "0.05", "--days", "45", "--until", "2010-02"]
    options = [word for pair in sets for word in ("--set", pair)]
    argv = ["train-idle", *scenario, "--policy", "idle-min", *options, "--workers", "1"]
    assert main([*argv, "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def narrow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One model for the pool on two features: trained in a second."""
    return train(tmp_path_factory.mktemp("narrow") / "models", f"features={NARROW}", "group=pool")


@pytest.fixture(scope="module")
def clustered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train(tmp_path_factory.mktemp("clustered") / "models", "group=cluster")


def config(tmp_path: Path, store: Path, options: dict[str, Any], policy: str = "idle-min") -> Path:
    raw = {
        "pool": TWIN,
        "policy": {"name": policy, "options": options},
        "publish": {"listen": "127.0.0.1:0"},
        "learning": {"idle_models": str(store)},
        "state": {"directory": str(tmp_path / "state")},
    }
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_check_config_refuses_a_store_of_other_features(
    narrow: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(["check-config", str(config(tmp_path, narrow, {"group": "pool"}))], capsys)
    assert f"error: learning.idle_models: {narrow}: " in line
    assert f"the store's models take features {NARROW}" in line
    assert f"policy.options.features is {DEFAULT} (the default)" in line
    assert f"--set features={DEFAULT}" in line and f"--out {narrow}`" in line
    assert f"or set policy.options features: {NARROW}" in line
    assert "group" not in line.split("; train again")[0]  # the group is the same


def test_run_refuses_it_at_start_rather_than_fail_every_cycle(
    narrow: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config(tmp_path, narrow, {"group": "pool"})
    line = refused(["run", "--config", str(path), "--out", str(tmp_path / "t")], capsys)
    assert line.startswith("htcondor-advisor run: error: learning.idle_models: ")
    assert f"the store's models take features {NARROW}" in line
    assert not (tmp_path / "t" / "jobs.csv").exists()


def test_a_store_of_another_group_is_refused_not_silently_neutral(
    clustered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(["check-config", str(config(tmp_path, clustered, {}))], capsys)
    assert "the store has one model per cluster" in line
    assert "policy.options.group is machine (the default)" in line
    assert "--set group=machine" in line and "group: cluster" in line
    assert "features" not in line.split("; train again")[0]


def test_every_difference_is_in_the_one_line(
    narrow: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config(tmp_path, narrow, {"group": "cluster"}, policy="idle-max")
    line = refused(["check-config", str(path)], capsys)
    assert f"take features {NARROW}" in line and "one model per pool" in line
    assert "policy.options.group is cluster;" in line  # given, not the default
    assert "train-idle ... --policy idle-max" in line
    assert f"features: {NARROW} and group: pool (the store's)" in line


def test_a_store_without_the_options_it_was_trained_with_is_refused(
    narrow: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old"
    shutil.copytree(narrow, old)
    meta = json.loads((old / "meta.json").read_text())
    del meta["features"], meta["options"]["group"]
    (old / "meta.json").write_text(json.dumps(meta))
    line = refused(["check-config", str(config(tmp_path, old, {"group": "pool"}))], capsys)
    assert "records no features, group" in line and "train it again" in line


def test_a_store_of_the_same_options_serves_any_idle_policy(
    narrow: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Only the features and the group shape the models: the ensemble rule (the policy's name)
    and the training budget do not, so a store trained for idle-min serves idle-max."""
    options = {"features": NARROW, "group": "pool", "trees": 3, "delta_min": 5}
    path = config(tmp_path, narrow, options, policy="idle-max")
    assert main(["check-config", str(path)]) == 0
    with caplog.at_level("INFO"):
        assert main(["run", "--config", str(path), "--out", str(tmp_path / "t")]) == 0
    assert "idle-max/1 starts from the models of" in caplog.text
    assert "1 model; 0 of 71 machines have none yet" in caplog.text  # one for the pool
    assert "failed to advise" not in caplog.text


def test_warm_start_itself_refuses_a_policy_of_other_options(clustered: Path) -> None:
    """For a caller that skipped ``check_inputs``: the key and the difference, not a traceback
    in every advice cycle."""
    policy = IdleMinPolicy(PolicyContext({}), {"group": "pool"})
    with pytest.raises(ModelStoreError, match=r"^learning.idle_models: .*one model per cluster"):
        warm_start(policy, clustered)
    assert not policy.models
    warm_start(IdleMinPolicy(PolicyContext({}), {"group": "cluster"}), clustered)


def test_models_that_are_not_the_ones_the_meta_describes_are_refused(
    narrow: Path, clustered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A training stopped between writing the models and their description leaves new models
    under the old meta: refused in one line, not served with the other store's features."""
    store = tmp_path / "models"
    shutil.copytree(narrow, store)
    shutil.copy(clustered / "models.pkl", store / "models.pkl")
    options = {"features": NARROW, "group": "pool"}
    path = str(config(tmp_path, store, options))
    said = refused(["run", "--config", path, "--out", str(tmp_path / "t")], capsys)
    assert said.endswith("retrain with `htcondor-advisor train-idle` into this --out")
    assert "models.pkl is not the one its meta.json describes" in said
    assert not list(store.glob(".*.tmp"))  # the trainings left no half-written file
