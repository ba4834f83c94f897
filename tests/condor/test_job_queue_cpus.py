"""The cores a queued job requests, as the daemon reads them from the schedd's job ads (real
classad2 ads): what frugal's queue and the power advice count it as (docs/slots.md)."""

from __future__ import annotations

import classad2

from advisor.condor.job_queue import QueueTracker
from plugins.contract.events import JobQueued

NOW = 1_700_000_000.0


def ad(proc: int, status: int, request_cpus: str | None) -> classad2.ClassAd:
    text = f'ClusterId = 7\nProcId = {proc}\nJobStatus = {status}\nOwner = "alice"\n'
    return classad2.parseOne(text + (f"RequestCpus = {request_cpus}\n" if request_cpus else ""))


def test_each_idle_job_is_counted_by_the_cores_it_requests() -> None:
    queue = QueueTracker()
    ads = [
        ad(0, 1, "4"),
        ad(1, 1, "ifThenElse(TARGET.Cpus > 8, 8, 2)"),  # decided per machine: 1, the default
        ad(2, 1, None),
        ad(3, 2, "2"),  # running: not in the idle queue
    ]
    events, by_class = queue.update(ads, NOW)
    cpus = {e.job_id: e.cpus for e in events if isinstance(e, JobQueued)}
    assert cpus == {"7.0": 4, "7.1": 1, "7.2": 1}
    assert queue.by_cpus == {4: 1, 1: 2} and sum(by_class) == 3
