"""Ensemble rules, Algorithm 1 through the advice, fast predictors and the model store."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from tracekit import MONDAY, H, inventory, trace

from advisor.lab.model_store import read_meta, save_models
from plugins.contract.events import AttemptEnded, AttemptOutcome, JobRemoved
from plugins.contract.policy import MachineView, OptionError, PolicyContext, PoolView
from plugins.idle.ensembles import combine, pick_model
from plugins.idle.features import BEST_FEATURES, features_now
from plugins.idle.history import DAY
from plugins.idle.models import FitTask, ModelPair, TrainingBudget, fit_pair
from plugins.idle.policy import IdleMaxPolicy, IdleMinPolicy, IdleRFPolicy
from simulator.campus.replay import machine_infos

RF = np.array([100.0, 500.0])
MLP = np.array([300.0, 200.0])


def test_max_min_avg_combine_both_predictions() -> None:
    assert combine("max", RF, MLP).tolist() == [300.0, 500.0]
    assert combine("min", RF, MLP).tolist() == [100.0, 200.0]
    assert combine("avg", RF, MLP).tolist() == [200.0, 350.0]
    assert combine("rf", RF, MLP).tolist() == RF.tolist()
    assert combine("mlp", RF, MLP).tolist() == MLP.tolist()


def test_last_month_and_best_on_average_choose_by_mse() -> None:
    history = [(1.0, 9.0), (1.0, 9.0), (5.0, 4.0)]  # RF better overall, MLP better last month
    assert pick_model("last-month", history) == "mlp"
    assert pick_model("best-avg", history) == "rf"
    assert pick_model("last-month", []) == "avg"  # nothing scored yet
    assert pick_model("min", history) == "min"


def _constant_pair(key: str, idle_s: float, seed: int = 0) -> ModelPair:
    x = np.random.default_rng(seed).random((50, len(BEST_FEATURES)))
    return fit_pair(FitTask(key, x, np.full(50, idle_s), seed, TrainingBudget(50, 3, 4, 5)))


def _policy(cls: type = IdleRFPolicy, n: int = 3) -> IdleRFPolicy:
    tr = trace(inventory(n), days=1)
    policy = cls(PolicyContext(machine_infos(tr)))
    models = {"pc0": _constant_pair("pc0", 5 * H), "pc1": _constant_pair("pc1", 1 * H)}
    models["pc2"] = _constant_pair("pc2", 0.0)
    policy.install(models, MONDAY)
    return policy


NOW = MONDAY + 4 * H  # 23 h before the next reboot: predictions are not capped


def _view(*names: str, state: str = "idle") -> PoolView:
    return PoolView([MachineView(n, state, NOW - H) for n in names], [0] * 24)


def test_fresh_job_ranks_longest_predicted_idle_first() -> None:
    advice = _policy().advise(_view("pc0", "pc1"), NOW)
    pc0, pc1 = advice.machines["pc0"], advice.machines["pc1"]
    assert pc0.predicted_idle_s == pytest.approx(5 * H)
    assert pc1.predicted_idle_s == pytest.approx(1 * H)
    assert pc0.rank > pc1.rank > 0 and not pc0.hold
    # predictedIdle = lastLogout + idle - t: it counts down and lapses when the period should end
    assert pc1.expires == pytest.approx(NOW + H) and pc1.rank == pytest.approx(NOW + H)


def test_machine_with_no_idle_left_is_held() -> None:
    advice = _policy().advise(_view("pc2", state="sleep"), NOW)
    assert advice.machines["pc2"].hold and advice.machines["pc2"].predicted_idle_s == 0.0


def test_prediction_never_runs_past_the_next_reboot() -> None:
    late = MONDAY + DAY + 2 * H  # 02:00: one hour to the 03:00 reboot
    idle = _policy().predict("pc0", late, late - H)
    assert idle == pytest.approx(H)


def test_job_run_before_needs_predicted_idle_above_its_longest_attempt() -> None:
    policy = _policy()
    ended = AttemptEnded(NOW, "7.0", "pc1", AttemptOutcome.EVICTED_OWNER, NOW - 2 * H)
    policy.observe(ended)
    advice = policy.advise(_view("pc0"), NOW)
    assert advice.jobs["7.0"].min_idle_s == pytest.approx(2 * H)
    assert "7.0" not in policy.advise(_view("pc0"), NOW).jobs  # published once, it persists
    policy.observe(AttemptEnded(NOW, "7.0", "pc0", AttemptOutcome.COMPLETED, NOW - H))
    assert "7.0" not in policy.longest


def test_a_job_evicted_then_removed_while_it_waits_is_forgotten() -> None:
    """Before, only an attempt's end cleared it: every such job stayed in the snapshot for
    good, and each restart advised it again."""
    policy = _policy()
    policy.observe(AttemptEnded(NOW, "7.0", "pc1", AttemptOutcome.EVICTED_OWNER, NOW - 2 * H))
    policy.observe(JobRemoved(NOW + 60, "7.0"))
    assert "7.0" not in policy.longest and "7.0" not in policy.advise(_view("pc0"), NOW).jobs
    restarted = _policy()
    restarted.load_state(policy.state_dict())
    assert not restarted.advise(_view("pc0"), NOW).jobs


def test_no_model_yet_means_neutral_advice_and_deferred_job_advice() -> None:
    tr = trace(inventory(2), days=1)
    policy = IdleMinPolicy(PolicyContext(machine_infos(tr)))
    policy.observe(AttemptEnded(NOW, "1.0", "pc0", AttemptOutcome.EVICTED_REBOOT, NOW - H))
    advice = policy.advise(_view("pc0", "pc1"), NOW)
    assert not advice.machines and not advice.jobs
    policy.install({"pc0": _constant_pair("pc0", 3 * H)}, NOW)
    later = policy.advise(_view("pc0", "pc1"), NOW)
    assert later.jobs["1.0"].min_idle_s == pytest.approx(H) and "pc1" not in later.machines


def test_min_and_max_ensembles_take_the_lower_and_the_higher_model() -> None:
    lo, hi = _policy(IdleMinPolicy), _policy(IdleMaxPolicy)
    t = lo.trainer
    x = features_now(
        lo.histories["pc1"], NOW, NOW - H, t.layout.codes["pc1"], t.calendar, t.feature_names
    )
    rf, mlp = lo.models["pc1"].predict(np.array([x]))
    assert lo.predict("pc1", NOW, NOW - H) == pytest.approx(max(0.0, min(rf[0], mlp[0])))
    assert hi.predict("pc1", NOW, NOW - H) == pytest.approx(max(0.0, max(rf[0], mlp[0])))


def test_fast_predictors_match_scikit_learn() -> None:
    rng = np.random.default_rng(2)
    x = rng.random((300, 7))
    y = (x[:, 0] * 3 + np.sin(6 * x[:, 1])) * DAY
    pair = fit_pair(FitTask("m", x, y, 4, TrainingBudget(300, 8, 6, 30)))
    rf, mlp = pair.predict(x)
    assert np.allclose(rf, pair.rf.predict(x) * DAY)
    assert np.allclose(mlp, pair.mlp.predict(x) * DAY)
    for i in range(0, 300, 37):
        assert pair.predict_one(x[i].tolist()) == pytest.approx((rf[i], mlp[i]))


def test_saved_models_load_back_with_identical_predictions(tmp_path: Path) -> None:
    models = _policy().models
    x = np.random.default_rng(5).random((20, len(BEST_FEATURES)))
    save_models(
        tmp_path,
        models,
        window=(MONDAY, NOW),
        features=BEST_FEATURES,
        options={},
        scores={},
        reboot_hour=None,
    )
    meta = read_meta(tmp_path)
    loaded = pickle.loads((tmp_path / "models.pkl").read_bytes())
    assert meta["features"] == list(BEST_FEATURES) and meta["groups"] == 3
    for key, pair in models.items():
        for a, b in zip(pair.predict(x), loaded[key].predict(x), strict=True):
            assert np.array_equal(a, b)


def test_bad_options_name_the_key() -> None:
    tr = trace(inventory(1), days=1)
    with pytest.raises(OptionError, match="features"):
        IdleRFPolicy(PolicyContext(machine_infos(tr)), {"features": "hourOfDay,colour"})
    with pytest.raises(OptionError, match="group"):
        IdleRFPolicy(PolicyContext(machine_infos(tr)), {"group": "room"})
