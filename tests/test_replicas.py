"""Replicated jobs in the simulator (paper 003 sec. 2.1) and their energy (eq. 1)."""

from __future__ import annotations

import numpy as np
import pytest
from tracekit import H, Recorder, inventory, trace

from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, Event
from plugins.contract.policy import PolicyContext
from plugins.replicas.policies import FixedReplicas
from plugins.replicas.qos import QosBound, contender_penalty, replica_reward, wasted_penalty
from simulator.campus.replay import machine_infos, replay
from simulator.campus.summary import summarize

WATTS = 57.0


class RecordedReplicas(FixedReplicas):
    """``replicas-fixed`` that also keeps every event (the Recorder's list)."""

    WANTS = Recorder.WANTS

    def __init__(self, context: PolicyContext, options: dict | None = None) -> None:
        super().__init__(context, options)
        self.events: list[Event] = []

    def observe(self, event: Event) -> None:
        self.events.append(event)


def run(sessions, jobs, replicas: int = 3, replicable: bool = True):
    tr = trace(inventory(3, active=WATTS), sessions, jobs)
    tr.jobs.replicable = np.array([replicable] * len(tr.jobs))
    policy = RecordedReplicas(PolicyContext(machine_infos(tr), seed=2), {"replicas": replicas})
    result = replay(tr, policy, seed=2)
    return result, policy.events


def ends(events: list[Event]) -> list[AttemptEnded]:
    return [e for e in events if isinstance(e, AttemptEnded)]


def test_first_replica_to_finish_wins_and_the_others_are_killed_at_once() -> None:
    # One 1 h job as 3 replicas from 10:00; pc0's owner evicts its replica at 10:30.
    result, events = run([(10.5 * H, 0, 16 * H)], [(10 * H, H, np.inf)])
    started = [e for e in events if isinstance(e, AttemptStarted)]
    assert len(started) == 3 and len({e.machine for e in started}) == 3
    done = [e for e in ends(events) if e.outcome is AttemptOutcome.COMPLETED]
    killed = [e for e in ends(events) if e.outcome is AttemptOutcome.REMOVED]
    evicted = [e for e in ends(events) if e.outcome is AttemptOutcome.EVICTED_OWNER]
    assert len(done) == 1 and len(killed) == 1 and len(evicted) == 1
    assert killed[0].time == done[0].time  # killed the instant the winner finished
    # eq. 1: good = the winner's attempt; bad = the killed replica (1 h) + the evicted one (0.5 h)
    s = summarize(result)
    assert s["energy_mwh"]["good"] == pytest.approx(WATTS * 1.0 / 1e6)
    assert s["energy_mwh"]["wasted"] == pytest.approx(WATTS * 1.5 / 1e6)
    assert s["jobs"]["completed"] == 1 and len(result.book.status) == 1
    assert result.book.evictions["owner"] == 1
    # the evicted replica waited in the queue and was withdrawn with the rest: nothing runs on
    assert sum(1 for m in result.pool.job if m >= 0) == 0


def test_user_removal_kills_every_replica() -> None:
    result, events = run([], [(10 * H, np.inf, 12 * H)])
    killed = [e for e in ends(events) if e.outcome is AttemptOutcome.REMOVED]
    assert len(killed) == 3 and {e.time for e in killed} == {result.trace.start + 12 * H}
    s = summarize(result)
    assert s["energy_mwh"]["good"] == 0.0
    assert s["energy_mwh"]["wasted"] == pytest.approx(3 * 2.0 * WATTS / 1e6)
    assert s["jobs"]["never_finished"] == 1


def test_jobs_not_marked_replicable_run_once() -> None:
    _, events = run([], [(10 * H, H, np.inf)], replicable=False)
    assert len([e for e in events if isinstance(e, AttemptStarted)]) == 1


def test_qos_bounds_and_penalties_by_hand() -> None:
    hour = QosBound()
    assert hour.met(0.0, 2 * H, 1.5 * H)  # floor(1.5) + 1 = 2 h
    assert not hour.met(0.0, 2 * H + 1, 1.5 * H)
    pct = QosBound("overhead", 50.0)
    assert pct.met(0.0, 1.5 * H, H) and not pct.met(0.0, 1.5 * H + 1, H)
    # 3 replicas of a 2 h job at 50 W would do 300 Wh; 75 Wh wasted -> delta x 0.25
    assert wasted_penalty(0.8, 75.0, 3, 2 * H, 50.0) == pytest.approx(0.2)
    assert wasted_penalty(0.8, 900.0, 3, 2 * H, 50.0) == pytest.approx(0.8)
    assert contender_penalty(0.6, 2, 4) == pytest.approx(0.3)
    assert replica_reward(True, 0.3) == pytest.approx(0.7)
    assert replica_reward(False, 0.3) == -1.0
