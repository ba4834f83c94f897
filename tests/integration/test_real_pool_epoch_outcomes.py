"""On the real pool: each way an attempt ends, as the schedd's epoch history reports it (asked
for ``EPOCH_PROJECTION`` only, as the daemon asks), reads as the outcome the policies learn."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

from advisor.condor.epochs import EPOCH_PROJECTION, outcome_of
from integration.conftest import COLLECTOR, first_schedd
from integration.pool.pool import ChrootPool
from integration.pool.waiting import wait_for

pytestmark = pytest.mark.integration
BASE = "should_transfer_files = NO\nrequest_memory = 64\n+AdvisorEpochTest = {tag}\n"
EXIT = "executable = /bin/sh\narguments = \"-c 'sleep 3; exit {code}'\"\n"
SLEEP = "executable = /bin/sleep\narguments = 600\n"
JOBS = {  # name: (submit lines, the outcome of each attempt in order)
    "exit 0": (EXIT.format(code=0), ["completed"]),
    "requeued by on_exit_remove": (
        EXIT.format(code=1) + "on_exit_remove = (ExitCode == 0)\n"
        "periodic_remove = NumJobStarts >= 2 && JobStatus == 1\n",
        ["held", "held"],
    ),
    "held by on_exit_hold": (EXIT.format(code=3) + "on_exit_hold = (ExitCode == 3)\n", ["held"]),
    "max_retries = 1": (EXIT.format(code=2) + "max_retries = 1\n", ["held", "completed"]),
    "periodic_hold": (
        SLEEP + "periodic_hold = JobStatus == 2 && time() - JobCurrentStartDate > 5\n",
        ["held"],
    ),
    "condor_hold": (SLEEP, ["held"]),
}


def test_every_attempt_s_end_reads_as_what_ended_it(idle_pool: ChrootPool) -> None:
    import htcondor2

    tag = time.monotonic_ns() % 10**9
    clusters = {}
    for name, (text, _) in JOBS.items():
        out = idle_pool.submit(BASE.format(tag=tag) + text + "queue 1\n")
        clusters[int(out.split("submitted to cluster ")[1].split(".")[0])] = name
    located = htcondor2.Collector(COLLECTOR).locate(htcondor2.DaemonTypes.Schedd, first_schedd())
    schedd = htcondor2.Schedd(located)
    held = next(c for c, n in clusters.items() if n == "condor_hold")

    def running() -> bool:
        return bool(schedd.query(f"ClusterId == {held} && JobStatus == 2", ["JobStatus"]))

    wait_for(running, 120, "the job to hold running")
    idle_pool.run("condor_hold", str(held), user="tester")

    def outcomes() -> dict[str, list[str]]:
        ads = schedd.jobEpochHistory(
            constraint=f"AdvisorEpochTest == {tag}", projection=list(EPOCH_PROJECTION)
        )
        found: dict[int, dict[int, str]] = defaultdict(dict)
        for ad in ads:  # (an exit held by its rule is written twice: its first ad stands)
            found[ad["ClusterId"]].setdefault(ad.get("RunInstanceID", 0), outcome_of(ad).value)
        return {clusters[c]: [runs[r] for r in sorted(runs)] for c, runs in found.items()}

    expected = {name: outcomes for name, (_, outcomes) in JOBS.items()}
    explain = lambda: str(outcomes())  # noqa: E731
    wait_for(lambda: outcomes() == expected, 180, "each attempt's epoch ad", 5.0, explain)
    idle_pool.run("condor_rm", *map(str, clusters), check=False)
