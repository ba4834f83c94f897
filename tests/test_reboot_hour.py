"""The nightly reboot is a fact of the pool (``pool.reboot_hour``, ``replay --reboot-hour``), not
an assumption: on a pool whose machines do not reboot, no policy holds jobs for a reboot, the
replay evicts none and the oracle does not foresee one."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from tracekit import MONDAY, H, Recorder, inventory, trace

from advisor.daemon.config import check_config
from advisor.daemon.fields import ConfigError
from advisor.daemon.runtime import make_policy
from advisor.lab.twin import TwinPool
from plugins.contract.clock import hours_to_reboot, next_reboot
from plugins.contract.events import AttemptEnded
from plugins.contract.policy import MachineInfo, MachineView, PolicyContext, PoolView
from plugins.frugal.payback import lost_hours
from plugins.frugal.policy import HELD, FrugalPolicy
from simulator.campus.oracle import TraceOracle
from simulator.campus.replay import machine_infos, replay
from simulator.campus.rules import PoolRules

INF = float("inf")
MACHINES = {"pc-1": MachineInfo("pc-1", "lab", "Normal", 57.0, 40.0, 2.0)}


def frugal_ranks_at_23(reboot_hour: float | None) -> tuple[float, ...]:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1, reboot_hour=reboot_hour))
    now = MONDAY + 23 * H
    advice = policy.advise(PoolView([MachineView("pc-1", "idle", now - H)], [1] + [0] * 23), now)
    return advice.shared[advice.follows["pc-1"]].rank_by_prior_hours or ()


def test_frugal_holds_for_the_reboot_only_on_a_pool_that_reboots() -> None:
    assert HELD in frugal_ranks_at_23(3.0)  # 4 hours before 03:00: long classes wait for it
    assert HELD not in frugal_ranks_at_23(None)
    assert all(r > 0 for r in frugal_ranks_at_23(None))


def test_without_a_reboot_an_attempt_is_cut_only_by_owners() -> None:
    assert next_reboot(MONDAY, None) == INF
    assert hours_to_reboot(INF, np.arange(3)).tolist() == [INF, INF, INF]
    assert hours_to_reboot(5.0, np.array([0, 5, 6])).tolist() == [5.0, 24.0, 23.0]
    lost = lost_hours(np.zeros((1, 80)), np.array([2.0, 10.0]), to_reboot_h=math.inf)
    assert lost[0].max() == 0.0  # no owner and no reboot: every start completes


def test_a_replay_without_reboots_evicts_no_job_at_three() -> None:
    tr = trace(inventory(), jobs=[(1 * H, 4 * H, INF)])  # would be killed at 03:00
    for hour, outcomes in ((3.0, ["EVICTED_REBOOT", "COMPLETED"]), (None, ["COMPLETED"])):
        policy = Recorder(PolicyContext(machine_infos(tr), reboot_hour=hour))
        result = replay(tr, policy, rules=PoolRules(reboot_hour=hour))
        ended = [e for e in policy.events if isinstance(e, AttemptEnded)]
        assert [e.outcome.name for e in ended] == outcomes
        assert result.book.evictions["reboot"] == (hour is not None)


def test_the_oracle_foresees_the_pools_reboot_only() -> None:
    tr = trace(inventory(), jobs=[])
    name = tr.inventory.machines[0].name
    assert TraceOracle(tr, 3.0).free_until(name, MONDAY + H) == MONDAY + 3 * H
    assert TraceOracle(tr, None).free_until(name, MONDAY + H) == INF


def test_a_live_pool_is_not_assumed_to_reboot_and_the_twin_reboots_as_the_campus() -> None:
    live = {"kind": "condor", "collector": "cm:9618"}
    assert make_policy(check_config({"pool": live}), {}).context.reboot_hour is None
    nightly = check_config({"pool": {**live, "reboot_hour": 2.5}})
    assert make_policy(nightly, {}).context.reboot_hour == 2.5
    twin = check_config({"pool": {"kind": "sim", "days": 2, "scale": 0.05}})
    assert make_policy(twin, {}).context.reboot_hour == 3.0
    with pytest.raises(ConfigError, match=r"pool.reboot_hour: must be an hour of the day .* 24"):
        check_config({"pool": {**live, "reboot_hour": 24}})


def test_replay_takes_none_or_an_hour_and_names_a_bad_one() -> None:
    command = [sys.executable, "-m", "advisor.cli", "replay", "--reboot-hour", "25", "--out", "x"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--reboot-hour: must be an hour of the day from 0 to below 24, or none" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_twin_snapshot_is_of_the_pool_with_its_reboot_hour() -> None:
    settings = {"scenario": "campus", "scenario_config": None, "days": 2, "scale": 0.05, "seed": 1}
    older = {"kind": "sim", **settings, "time": MONDAY}  # written before the keys: 03:00, no bound
    TwinPool({**settings, "reboot_hour": 3.0, "wait_bound": None}, {}).restore(older)
    with pytest.raises(ValueError, match="snapshot is of another pool"):
        TwinPool({**settings, "reboot_hour": None, "wait_bound": None}, {}).restore(older)
    with pytest.raises(ValueError, match="snapshot is of another pool"):  # (its starvation bound)
        TwinPool({**settings, "reboot_hour": 3.0, "wait_bound": 86400.0}, {}).restore(older)
