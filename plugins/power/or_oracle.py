"""``or-oracle`` (OR*, paper 001, section 5.2): keep nodes reserved and off while no queued job
would wait past tau * walltime; it knows the true runtimes, so it is an oracle (replay only)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from plugins.contract.policy import Option
from plugins.power.base import PowerPolicy, idle_longer_than
from plugins.power.view import (
    COMPUTING,
    IDLE,
    OFF,
    SWITCHING_OFF,
    SWITCHING_ON,
    ClusterView,
    PowerDecision,
    RuntimeOracle,
)

DECISION_S = 60.0


def _fraction(value: float) -> str | None:
    return None if value >= 0 else "must be >= 0 (a share of the walltime, e.g. 0.5)"


class OrOraclePolicy(PowerPolicy):
    """Releases reserved nodes only for a job that would otherwise start after its deadline."""

    NAME = "or-oracle"
    NEEDS_ORACLE = True
    SERVES = frozenset({"dedicated"})  # its runtimes oracle exists only in the dedicated model
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "tau": Option(0.5, float, "allowed wait as a share of the walltime", _fraction),
        "base_t": Option(0.0, float, "idle minutes before an unreserved node goes off", _fraction),
    }

    oracle: RuntimeOracle | None = None

    def bind_oracle(self, oracle: RuntimeOracle) -> None:
        self.oracle = oracle

    def decide(self, view: ClusterView) -> PowerDecision:
        if self.oracle is None:
            raise RuntimeError("or-oracle needs the true runtimes (dedicated replay only)")
        going = idle_longer_than(view, 60.0 * self.options["base_t"])
        off_like = view.count(OFF) + view.count(SWITCHING_OFF) + len(going)
        release = self.release(view, self.oracle.running_end(), self.oracle.queued_runtime(), going)
        return PowerDecision(max(0, off_like - release), going)

    def release(
        self,
        view: ClusterView,
        running_end: np.ndarray,
        runtime: np.ndarray,
        going: tuple[int, ...],
    ) -> int:
        """Nodes to boot now so that every queued job starts by arrival + tau * walltime.

        Queued jobs take the cores of computing nodes as running jobs really end (the oracle);
        a job that cannot and whose deadline is within a boot plus one decision gets new nodes.
        """
        c, now = view.cores_per_node, view.now
        mine = ~view.reserved
        on = ((view.node_state == COMPUTING) | (view.node_state == IDLE)) & mine
        free_now = int(c * on.sum() - view.running_cores.sum()) - c * len(going)
        booting = view.ready_at[(view.node_state == SWITCHING_ON) & mine].tolist()
        times = [now, *booting, *running_end.tolist()]
        cores = [free_now, *([c] * len(booting)), *view.running_cores.tolist()]
        release = 0
        for q, wall, arrival, run in zip(
            view.queue_cores.tolist(),
            view.queue_walltime.tolist(),
            view.queue_arrival.tolist(),
            runtime.tolist(),
            strict=True,
        ):
            deadline = arrival + self.options["tau"] * wall
            start = _take(times, cores, q, deadline)
            if start is None and now + view.switch_on_s + DECISION_S >= deadline:
                nodes = math.ceil(q / c)
                release += nodes
                times.append(now + view.switch_on_s)
                cores.append(nodes * c)
                start = _take(times, cores, q, math.inf)
            if start is not None:
                times.append(start + run)
                cores.append(q)
        return release


def _take(times: list[float], cores: list[int], q: int, deadline: float) -> float | None:
    """Take ``q`` cores from the earliest that become free by ``deadline``; when, or None."""
    order = np.argsort(times, kind="stable")
    total = 0
    for i in order:
        if times[i] > deadline:
            return None
        total += cores[i]
        if total >= q:
            when = times[i]
            need = q
            for k in order:
                used = min(need, cores[k])
                cores[k] -= used
                need -= used
                if need == 0:
                    break
            return when
    return None
