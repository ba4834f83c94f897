"""Future knowledge read from the trace, for oracle policies only (Crystal, paper 004 sec. III)."""

from __future__ import annotations

import numpy as np

from plugins.contract.clock import next_reboot
from simulator.campus.rules import CAMPUS_REBOOT_HOUR
from simulator.trace_model import Trace


class TraceOracle:
    """Answers ``free_until`` and ``job_runtime`` by looking ahead in the trace."""

    def __init__(self, trace: Trace, reboot_hour: float | None = CAMPUS_REBOOT_HOUR) -> None:
        names = [m.name for m in trace.inventory.machines]
        self._index = {name: i for i, name in enumerate(names)}
        by_machine = np.argsort(trace.owners.machine, kind="stable")
        machines = trace.owners.machine[by_machine]
        logins = trace.owners.login[by_machine]
        bounds = np.searchsorted(machines, np.arange(len(names) + 1))
        self._logins = [np.sort(logins[bounds[i] : bounds[i + 1]]) for i in range(len(names))]
        down = trace.unavailability
        self._downs = [np.sort(down.start[down.machine == i]) for i in range(len(names))]
        self._reboot_hour = reboot_hour
        self._runtime = dict(zip(trace.jobs.job_id, trace.jobs.runtime.tolist(), strict=True))

    def free_until(self, machine: str, t: float) -> float:
        i = self._index[machine]
        until = next_reboot(t, self._reboot_hour)
        for times in (self._logins[i], self._downs[i]):
            pos = int(np.searchsorted(times, t, side="right"))
            if pos < len(times):
                until = min(until, float(times[pos]))
        return until

    def job_runtime(self, job_id: str) -> float | None:
        runtime = self._runtime[job_id]
        return runtime if np.isfinite(runtime) else None
