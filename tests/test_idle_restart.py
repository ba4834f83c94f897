"""A restarted daemon keeps what an idle-time policy learned: the owner sessions and reboots its
snapshot leaves out come back from the journal, up to where the snapshot stood, and models
fitted on them again predict as those the restart lost."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from advisor.condor.journal import Journal
from advisor.daemon.host import PolicyHost
from advisor.daemon.metrics import DaemonMetrics
from advisor.lab.relearn import refit_at_start, relearn, trained_until
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


def test_refit_only_when_the_models_at_start_are_older_than_those_lost() -> None:
    policy = idle_policy()
    assert not refit_at_start(policy, None)  # never trained: nothing was lost
    policy.install({"pool": object()}, trained_until=START)  # type: ignore[dict-item]
    assert refit_at_start(policy, START + DAY)  # the store's models are a day older
    assert not refit_at_start(policy, START)  # the store's are the ones it had
    assert not refit_at_start(policy, START - DAY)


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
