"""On the real pool: a shadow killed while its job runs writes no epoch ad. The schedd starts
another shadow on the claim at once, which finds the slot busy and writes its own epoch ad,
with its own start (``VacateReasonCode`` 1032), and the job goes back to idle. The daemon ends
the killed attempt as lost (advisor/condor/lost_attempts.py) once the queue has shown it over
for ``LOST_AFTER_S``; before, the policies counted it running for good."""

from __future__ import annotations

import subprocess
import time
from functools import partial

import pytest

from advisor.condor import lost_attempts
from advisor.condor.factory import build_condor_pool
from advisor.condor.source import CondorPoolSource
from integration.conftest import first_schedd, pool_state, wait_for
from integration.pool.pool import COLLECTOR, ChrootPool
from integration.test_real_pool_removals import SLEEP, polling
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted, Event

pytestmark = pytest.mark.integration


def test_an_attempt_whose_shadow_was_killed_ends_lost(
    idle_pool: ChrootPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lost_attempts, "LOST_AFTER_S", 10.0)  # (600 s live)
    source, _ = build_condor_pool({"collector": COLLECTOR, "active_idle_s": 0})
    assert isinstance(source, CondorPoolSource)
    events: list[Event] = []
    poll = polling(events, source)
    idle_pool.submit(f"{SLEEP}queue 1\n")
    why = partial(pool_state, idle_pool)
    (first,) = wait_for(
        lambda: [e for e in poll() if isinstance(e, AttemptStarted)], 60, "a start", explain=why
    )

    def executing() -> bool:  # (then the schedd's next shadow on the claim starts seconds later)
        out = idle_pool.run("condor_q", "-af", "NumJobStarts", user="tester").split()
        return out == ["1"] and time.time() - first.time > 2

    wait_for(executing, 60, "the job executing", explain=why)
    subprocess.run(["pkill", "-KILL", "-x", "condor_shadow"], check=True)  # (the pool's only)

    def ended() -> list[AttemptEnded]:
        return [e for e in poll() if isinstance(e, AttemptEnded) and e.started == first.time]

    (end,) = wait_for(ended, 120, "the attempt ended", explain=why)
    assert (end.job_id, end.machine) == (first.job_id, first.machine)
    assert end.outcome is AttemptOutcome.EVICTED_REBOOT
    (schedd,) = [s for s in source.schedds if s.name == first_schedd()]
    assert (first.job_id.split("@")[0], first.time) in schedd.queue.lost.closed  # not an epoch ad
    for _ in range(3):  # and once
        time.sleep(2)
        assert len(ended()) == 1
