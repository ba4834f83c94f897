"""On the real pool: owner sessions from the collector, attempts from the epoch history, the same
attempts reaching a policy through the running daemon, and the daemon's journal exported as a
trace that ``replay`` runs."""

from __future__ import annotations

import re
import signal
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from advisor.cli import main
from advisor.condor.factory import build_condor_pool
from advisor.daemon.state_store import StateStore
from integration.conftest import DaemonStarter, pool_state, running_jobs, startd_ads, wait_for
from integration.pool.pool import COLLECTOR, DOMAIN, ChrootPool
from plugins.bandits.placement import ComputerBandit
from plugins.bandits.rewards import placement_reward
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    OwnerSessionEnded,
)
from plugins.contract.events import OwnerSessionStarted as Started
from plugins.contract.policy import MachineInfo, PolicyContext

pytestmark = pytest.mark.integration
UPDATE_INTERVAL = 5.0
"""The test pool's UPDATE_INTERVAL: "within one startd update"."""
JOB_S = 15


def job(seconds: int, count: int, extra: str = "") -> str:
    return (
        f"executable = /bin/sleep\narguments = {seconds}\nshould_transfer_files = NO\n"
        f"request_memory = 64\n{extra}\nqueue {count}\n"
    )


def test_owner_sessions_evictions_rewards_and_trace_export(
    idle_pool: ChrootPool, start_daemon: DaemonStarter, tmp_path: Path
) -> None:
    source, sinks = build_condor_pool({"collector": COLLECTOR, "active_idle_s": 0})
    assert sinks == []  # no token: READ only, nothing merged
    daemon = start_daemon(tmp_path, {"policy": {"name": "fixed-advice"}})
    state = tmp_path / "state"  # the daemon's state directory: snapshots and its journal
    events: list[Event] = []
    machines: dict[str, MachineInfo] = {}

    def poll() -> list[Event]:
        obs = source.poll(time.time())
        assert obs.healthy
        events.extend(obs.events)
        machines.update(obs.machines)
        return list(obs.events)

    poll()  # what earlier tests left in the history is not this test's
    events.clear()
    idle_pool.submit(job(JOB_S, 4))

    def polled_running() -> dict[str, str]:
        poll()
        return _running()

    why = partial(pool_state, idle_pool)
    running = wait_for(polled_running, 60, "four jobs running", every=0.5, explain=why)
    victim_job, victim = sorted(running.items())[0]
    login = time.time() + 2
    logout = login + 8
    idle_pool.set_owner_schedule(victim.split(".")[0], [(login, logout)])

    def done() -> bool:
        poll()
        ended = [e for e in events if isinstance(e, AttemptEnded) and e.job_id in running]
        return sum(e.outcome is AttemptOutcome.COMPLETED for e in ended) == 4 and any(
            isinstance(e, OwnerSessionEnded) for e in events
        )

    wait_for(done, 120, "four completed attempts and the owner's session", every=0.5)
    sessions = [e for e in events if isinstance(e, Started | OwnerSessionEnded)]
    assert [type(e) for e in sessions] == [Started, OwnerSessionEnded]
    assert all(e.machine == victim for e in sessions)
    assert abs(sessions[0].time - login) <= UPDATE_INTERVAL
    assert abs(sessions[1].time - logout) <= UPDATE_INTERVAL
    mine = [e for e in events if isinstance(e, AttemptEnded) and e.job_id in running]
    evicted = [e for e in mine if e.outcome != "completed"]
    assert [(e.job_id, e.machine, e.outcome) for e in evicted] == [
        (victim_job, victim, AttemptOutcome.EVICTED_OWNER)
    ]
    assert abs(evicted[0].time - login) <= UPDATE_INTERVAL
    completed = [e for e in mine if e.outcome == "completed"]
    assert sorted(e.job_id for e in completed) == sorted(running)
    assert all(JOB_S <= e.time - e.started <= JOB_S + 5 for e in completed)

    # the placement bandit's eq. 4 rewards from these real events: +1 - sigma E_a per completed
    # attempt, -1 + sigma (1 - E_a) per eviction, summed on the machine each attempt ran on
    reward_sums: dict[str, float] = {}
    started = {(e.job_id, e.machine) for e in events if isinstance(e, AttemptStarted)}
    for e in events:
        if isinstance(e, AttemptEnded) and (e.job_id, e.machine) in started:
            reward_sums[e.machine] = reward_sums.get(e.machine, 0.0) + placement_reward(
                e.outcome, 0, 0.8
            )
    evicted_seen = [
        (e.job_id, e.machine)
        for e in events
        if isinstance(e, AttemptEnded) and e.outcome is AttemptOutcome.EVICTED_OWNER
    ]
    assert evicted_seen == [(victim_job, victim)]  # its reward -1 + 0.8 is in the victim's sum
    assert bandit_rewards(events, machines) == pytest.approx(reward_sums)

    # restart: a new source resumes from the cursor and reports nothing twice
    again, _ = build_condor_pool({"collector": COLLECTOR, "active_idle_s": 0})
    again.restore(source.cursor())
    assert again.poll(time.time()).events == []

    # rewards: the daemon fed the same ended attempts to its policy (seen in its snapshot)
    # (the victim's second attempt runs wherever a slot is free when the owner leaves)
    expected = sorted([e.job_id, e.machine, e.outcome.value] for e in mine)
    wait_for(lambda: policy_ended(state, running) == expected, 30, "the policy's attempts")
    outcomes = outcome_counts(daemon.get("/metrics")[2])
    assert outcomes["completed"] >= 4 and outcomes["evicted-owner"] >= 1
    daemon.proc.send_signal(signal.SIGTERM)
    assert daemon.finish(30) == 0
    assert policy_ended(state, running) == expected  # the final snapshot keeps them

    trace = tmp_path / "trace"
    assert main(["trace", "export", "--state", str(state), "--out", str(trace)]) == 0
    rows = [line.split(",") for line in (trace / "jobs.csv").read_text().splitlines()[1:]]
    runtimes = {job_id: float(runtime or "inf") for _, job_id, _, runtime, *_ in rows}
    assert all(JOB_S <= runtimes[j] <= JOB_S + 5 for j in running)
    out = tmp_path / "replay"
    argv = ["replay", "--machines", str(trace / "machines.yaml"), "--owners"]
    argv += [str(trace / "owners.csv"), "--jobs", str(trace / "jobs.csv"), "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    assert (out / "summary.json").exists()


def bandit_rewards(events: list[Event], machines: dict[str, MachineInfo]) -> dict[str, float]:
    """The placement rewards ``bandit-computer`` learns from ``events``, summed per machine.

    The test pool's machines all draw the same power, so eq. 5 gives E_a = 0 for each.
    """
    bandit = ComputerBandit(PolicyContext(machines=machines, seed=1), {"sigma": 0.8})
    for event in events:
        bandit.observe(event)
    sums: dict[str, float] = {}
    for per_action in bandit.agent.estimates.values():
        for action, estimate in per_action.items():
            if action in machines:
                sums[action] = sums.get(action, 0.0) + estimate.total
    return sums


def policy_ended(state: Path, jobs: dict[str, str]) -> list[list[str]]:
    """[job, machine, outcome] of ``jobs``' ended attempts in the newest snapshot's policy state."""
    loaded = StateStore(state).load_newest()
    if loaded is None:
        return []
    ended: dict[str, Any] = loaded.state["policy"]["state"]["ended"]
    rows = [[job_id, m, outcome] for m, pairs in ended.items() for job_id, outcome in pairs]
    return sorted(row for row in rows if row[0] in jobs)


def outcome_counts(metrics: str) -> dict[str, float]:
    """``advisor_attempt_outcomes_total`` by outcome, from the daemon's /metrics text."""
    pattern = r'^advisor_attempt_outcomes_total\{outcome="([^"]+)"\} (\S+)$'
    return {m[1]: float(m[2]) for m in re.finditer(pattern, metrics, re.MULTILINE)}


def _running() -> dict[str, str]:
    """All four jobs running, by id -> machine, once the collector shows four claimed slots."""
    running = running_jobs()
    claimed = [m for m, ad in startd_ads(["State"]).items() if ad["State"] == "Claimed"]
    ok = len(running) == 4 and len(claimed) == 4 and all(m.endswith(DOMAIN) for m in claimed)
    return running if ok else {}
