"""A restarted daemon keeps what an idle-time policy learned: the owner sessions and reboots its
snapshot leaves out come back from the journal, up to where the snapshot stood, and models
fitted on them again predict as those the restart lost."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from advisor.condor.factory import build_condor_pool
from advisor.condor.journal import Journal
from advisor.condor.source import CondorPoolSource
from advisor.daemon.config import check_config
from advisor.daemon.host import PolicyHost
from advisor.daemon.metrics import DaemonMetrics
from advisor.daemon.runtime import Daemon
from advisor.lab.relearn import missed_retraining, refit_at_start, relearn, trained_until
from advisor.lab.relearn_bench import Unpolled
from plugins.contract.events import (
    Event,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.policy import MachineInfo, PolicyContext
from plugins.idle.policy import IdleMinPolicy

DAY = 86400.0
START = 1262304000.0  # 2010-01-01
MACHINES = {n: MachineInfo(n, "lab", "Normal", 57.0, 40.0, 2.0) for n in ("pc1", "pc2")}
SMALL = {"trees": 3, "max_depth": 4, "mlp_epochs": 3, "max_samples": 200}


def host_of(policy: IdleMinPolicy) -> PolicyHost:
    host = PolicyHost(policy, Unpolled(), [], DaemonMetrics(lambda: 0.0), 600.0)
    host.join(MACHINES)
    return host


def idle_policy() -> IdleMinPolicy:
    return IdleMinPolicy(PolicyContext(machines=dict(MACHINES), seed=3), SMALL)


def owner_days(days: int) -> list[Event]:
    """Both machines' owners, a few sessions a day, and the nightly reboot, in time order."""
    rng = np.random.default_rng(7)
    events: list[Event] = []
    for day in range(days):
        base = START + day * DAY
        for machine in MACHINES:
            events.append(MachinePowerChanged(base + 3 * 3600, machine, PowerState.REBOOTED))
            for hour in sorted(rng.uniform(8, 20, size=3)):
                login = base + hour * 3600
                events.append(OwnerSessionStarted(login, machine))
                events.append(OwnerSessionEnded(login + rng.uniform(600, 3000), machine))
    return sorted(events, key=lambda e: e.time)


def test_only_the_events_before_the_snapshot_are_learned_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(tmp_path)
    journal.append(
        [
            OwnerSessionStarted(100.0, "pc1"),
            OwnerSessionEnded(200.0, "pc1"),
            MachinePowerChanged(300.0, "pc2", PowerState.REBOOTED),
            OwnerSessionStarted(350.0, "elsewhere"),  # a machine the snapshot does not know
        ],
        now=360.0,
    )
    snapshot = {"cursor": {"journal_bytes": journal.size()}}
    journal.append(
        [OwnerSessionStarted(400.0, "pc1")], 400.0
    )  # after the snapshot: the pool reports it
    policy = idle_policy()
    with caplog.at_level(logging.INFO):
        assert relearn(host_of(policy), snapshot, tmp_path) == 3
    assert "idle-min/1 learned 3 events again from the journal" in caplog.text
    pc1, pc2 = policy.histories["pc1"], policy.histories["pc2"]
    assert (list(pc1.logins), list(pc1.logouts), pc1.owners) == ([100.0], [200.0], 0)
    assert list(pc2.reboots) == [300.0]


def test_a_snapshot_that_names_no_place_in_a_journal_says_what_is_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    Journal(tmp_path).append([OwnerSessionStarted(100.0, "pc1")], 100.0)
    policy = idle_policy()
    assert relearn(host_of(policy), {"cursor": {"journal_bytes": None}}, tmp_path) == 0
    assert "resumes without the owner sessions it had learned" in caplog.text
    assert "pool.journal: true" in caplog.text
    assert list(policy.histories["pc1"].logins) == []


def test_a_stop_without_a_last_snapshot_teaches_no_owner_session_twice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A login journalled after the last snapshot, then a kill: the source resumed from that
    snapshot reports the login again. Both copies stayed in the journal, and every later
    restart relearned two logins and one logout, a machine taken by its owner for good."""
    source, _ = build_condor_pool({"collector": "127.0.0.1:1", "state_dir": str(tmp_path)})
    assert isinstance(source, CondorPoolSource) and source.journal is not None
    source.journal.append([OwnerSessionStarted(100.0, "pc1"), OwnerSessionEnded(200.0, "pc1")], 200)
    snapshot = {"cursor": source.cursor()}
    source.journal.append([OwnerSessionStarted(300.0, "pc1")], 300.0)  # then killed
    resumed, _ = build_condor_pool({"collector": "127.0.0.1:1", "state_dir": str(tmp_path)})
    assert isinstance(resumed, CondorPoolSource) and resumed.journal is not None
    resumed.restore(snapshot["cursor"])
    assert "cut off the" in caplog.text
    again: list[Event] = [OwnerSessionStarted(300.0, "pc1"), OwnerSessionEnded(400.0, "pc1")]
    resumed.journal.append(again, 400.0)  # what the resumed source reports
    policy = idle_policy()
    relearn(host_of(policy), {"cursor": resumed.cursor()}, tmp_path)  # the next restart
    history = policy.histories["pc1"]
    assert history.owners == 0 and list(history.logouts) == [200.0, 400.0]


def test_a_reload_that_changes_an_idle_policys_options_waits_for_a_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Rebuilt by SIGHUP, the policy kept its snapshot's state but not the owner history a
    snapshot leaves out, nor its models: neutral advice until a restart relearned both."""
    section = {"name": "idle-min", "options": SMALL}
    config = check_config(
        {
            "pool": {"kind": "condor", "collector": "cm:9618"},
            "policy": section,
            "state": {"directory": str(tmp_path)},
        }
    )
    policy = IdleMinPolicy(PolicyContext(machines=dict(MACHINES), seed=3), SMALL)
    daemon = Daemon(config, policy, Unpolled(), [], lambda: START)
    for event in owner_days(3):
        policy.observe(event)
    sessions = len(policy.histories["pc1"].logouts)
    changed = tmp_path / "advisor.yaml"
    section = {"name": "idle-min", "options": {**SMALL, "trees": 4}}
    changed.write_text(yaml.safe_dump({**config_document(tmp_path), "policy": section}))
    with caplog.at_level(logging.WARNING):
        assert daemon.reload(changed, {}, None)
    assert daemon.host.policy is policy and len(policy.histories["pc1"].logouts) == sessions > 0
    assert "a change of policy.options needs a restart" in caplog.text


def config_document(directory: Path) -> dict[str, Any]:
    return {
        "pool": {"kind": "condor", "collector": "cm:9618"},
        "state": {"directory": str(directory)},
    }


def test_a_journal_lost_or_damaged_is_said_and_the_daemon_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(tmp_path)
    journal.append([OwnerSessionStarted(100.0, "pc1"), OwnerSessionEnded(200.0, "pc1")], 200.0)
    snapshot = {"cursor": {"journal_bytes": journal.size()}}
    events = tmp_path / "condor-journal" / "events.jsonl"
    lines = events.read_text().splitlines(keepends=True)
    events.write_text(lines[0] + '{"kind": "OwnerSessionEnded", "time": -1, "machine": "pc1"}\n')
    policy = idle_policy()
    assert relearn(host_of(policy), snapshot, tmp_path) == 1
    assert "events.jsonl:2" in caplog.text
    assert "relearned only the 1 events before it" in caplog.text
    events.unlink()  # an administrator cleaned the state directory up
    assert relearn(host_of(idle_policy()), snapshot, tmp_path) == 0
    assert "no such file" in caplog.text


def test_a_restarted_policy_refits_the_models_it_had(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    events = owner_days(40)
    before = idle_policy()
    for event in events:
        before.observe(event)
    journal.append(events, events[-1].time)
    cutoff = START + 40 * DAY
    before.retrain(cutoff)
    assert before.models, "forty days of two machines train a model each"
    snapshot = {
        "cursor": {"journal_bytes": journal.size()},
        "state": json.loads(json.dumps(before.state_dict())),
    }

    after = idle_policy()
    after.load_state(snapshot["state"])
    assert relearn(host_of(after), snapshot, tmp_path) == len(events)
    had = trained_until(after)
    assert had == cutoff and not after.models  # the snapshot keeps no models
    assert refit_at_start(after, had)
    after.retrain(cutoff)
    for machine in MACHINES:
        for hours in (1.0, 5.0, 30.0):
            now = cutoff + hours * 3600
            free_since = now - 1800
            assert after.predict(machine, now, free_since) == before.predict(
                machine, now, free_since
            )


def test_a_restart_from_a_store_scores_no_month_twice() -> None:
    """Started from a store (trained to day 20), retrained on day 40 (scoring the store's
    models on days 20 to 40), restarted: the refit at start installs the store's models again
    and fits at day 40; scored again, each restart added the store's month to the scores the
    ``last-month`` and ``best-avg`` rules pick a model by."""
    events = owner_days(40)
    first = idle_policy()
    for event in events:
        first.observe(event)
    first.retrain(START + 20 * DAY)
    store, store_until = dict(first.models), START + 20 * DAY
    first.retrain(START + 40 * DAY)
    rows = len(first.trainer.accuracy)
    assert rows and {r["month_start"] for r in first.trainer.accuracy} == {store_until}
    state = json.loads(json.dumps(first.state_dict()))
    for _ in range(2):
        again = idle_policy()
        again.load_state(state)
        for event in events:
            again.observe(event)
        had = trained_until(again)
        again.install(store, store_until)  # learning.idle_models
        assert had is not None and refit_at_start(again, had)
        again.retrain(had)
        assert len(again.trainer.accuracy) == rows
        state = json.loads(json.dumps(again.state_dict()))


def test_refit_only_when_the_models_at_start_are_older_than_those_lost() -> None:
    policy = idle_policy()
    assert not refit_at_start(policy, None)  # never trained: nothing was lost
    policy.install({"pool": object()}, trained_until=START)  # type: ignore[dict-item]
    assert refit_at_start(policy, START + DAY)  # the store's models are a day older
    assert not refit_at_start(policy, START)  # the store's are the ones it had
    assert not refit_at_start(policy, START - DAY)


def test_a_retraining_due_while_the_daemon_was_down_is_made_up_at_start() -> None:
    """The schedule alone waits for its next time: a restart at 00:05 on the 1st, or a stop
    while the monthly retraining ran, left last month's models (or none) for another month."""
    policy = idle_policy()
    monthly = "0 0 1 * *"
    march = datetime(2026, 3, 1, tzinfo=UTC).timestamp()
    february = datetime(2026, 2, 1, tzinfo=UTC).timestamp()
    assert missed_retraining(policy, monthly, february, None, march + 300) == march
    assert missed_retraining(policy, monthly, march, None, march + 300) is None  # it ran
    assert missed_retraining(policy, monthly, february, None, march - 300) is None  # not yet
    # never trained: a retraining due after its last snapshot, while it was down
    assert missed_retraining(policy, monthly, None, march - 600, march + 300) == march
    assert missed_retraining(policy, monthly, None, march + 60, march + 300) is None
    assert missed_retraining(policy, monthly, None, None, march + 300) is None  # a first start
    policy.install({"pool": object()}, trained_until=march + 10)  # type: ignore[dict-item]
    assert missed_retraining(policy, monthly, february, None, march + 300) is None  # a store's


def test_the_relearning_bench_feeds_every_owner_event_of_the_campus(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from advisor.cli import main

    assert main(["bench-daemon", "relearn", "--days", "3", "--scale", "0.05"]) == 0
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows["policy"].strip() == "idle-min" and int(rows["machines"]) > 0
    # each session's start and end, and each machine's nightly reboots (3 nights)
    assert int(rows["events"].split()[-1]) >= 3 * int(rows["machines"])


def idle_twin(state: Path, stop_at: float | None = None) -> Any:
    """Three weeks of an idle policy on the simulated campus, retrained on the 8th and 15th."""
    from advisor.daemon.config import check_config
    from advisor.daemon.signals import Control
    from advisor.lab.twin_run import TwinOptions, run_twin

    config = check_config(
        {
            "pool": {"kind": "sim", "days": 21, "scale": 0.05, "seed": 5},
            "policy": {"name": "idle-min", "options": SMALL},
            "publish": {"listen": "127.0.0.1:0"},
            "learning": {"retrain": "0 0 8,15 * *"},
            "state": {"directory": str(state), "snapshot_interval": "6h"},
        }
    )
    control = Control()

    def progress(fraction: float) -> None:
        if stop_at is not None and fraction >= stop_at:
            control.stop.set()

    return run_twin(config, control, TwinOptions(on_progress=progress))


def test_a_twin_stopped_and_resumed_ends_as_the_unbroken_one(tmp_path: Path) -> None:
    """The twin plays the journal's part with the re-simulated pool: the restarted idle policy
    gets back its owner history and the models it had, so nothing of its learning is lost."""
    whole = idle_twin(tmp_path / "whole")
    stopped = idle_twin(tmp_path / "split", stop_at=0.8)  # after the second retraining
    assert not stopped.finished and stopped.daemon.host.policy.models
    resumed = idle_twin(tmp_path / "split")
    assert resumed.finished
    for key in ("energy_mwh", "jobs", "evictions", "overhead_min_mean"):
        assert resumed.summary[key] == whole.summary[key], key
