"""EASY backfilling (paper 001, section 5.2) with the queue in Smallest-estimated-Area-First order.

The first job of the queue gets a reservation at its shadow time (when enough cores will be free
by the walltimes of running jobs, the boots under way and the off nodes it may wake); a later job
is started now only if it ends by the shadow time or uses cores the first job will not need.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from simulator.dedicated.cluster import Cluster
from simulator.dedicated.power import NodeState

QueueKey = Callable[[Cluster, int], tuple[float, ...]]


def saf_key(cluster: Cluster, job: int) -> tuple[float, ...]:
    """Eq. 11: f(j) = wall_j * q_j, ascending; ties by arrival."""
    jobs = cluster.jobs
    return (float(jobs.walltime[job] * jobs.cores[job]), float(jobs.arrival[job]), job)


def fcfs_key(cluster: Cluster, job: int) -> tuple[float, ...]:
    return (float(cluster.jobs.arrival[job]), job)


ORDERS: dict[str, QueueKey] = {"saf": saf_key, "fcfs": fcfs_key}


def shadow_time(cluster: Cluster, cores: int) -> tuple[float, int]:
    """When ``cores`` unreserved cores will be free at the latest, and how many spare then."""
    now, c = cluster.engine.now(), cluster.cores_per_node
    on_s = cluster.profile.switch_on_s
    free = ~cluster.reserved
    times = [now]
    amounts = [int(cluster.free_cores().sum())]
    for node in np.flatnonzero(free & (cluster.state == NodeState.SWITCHING_ON)):
        times.append(float(cluster.transition_end[node]))
        amounts.append(c)
    for node in np.flatnonzero(free & (cluster.state == NodeState.SWITCHING_OFF)):
        times.append(float(cluster.transition_end[node]) + on_s)
        amounts.append(c)
    n_off = int(np.count_nonzero(free & (cluster.state == NodeState.OFF)))
    if n_off:
        times.append(now + on_s)
        amounts.append(c * n_off)
    jobs = cluster.jobs
    for job in cluster.running:
        times.append(float(cluster.record.start[job] + jobs.walltime[job]))
        amounts.append(int(jobs.cores[job]))
    total = 0
    for i in np.argsort(times, kind="stable"):
        total += amounts[i]
        if total >= cores:
            return times[i], total - cores
    return math.inf, 0


def wake_for(cluster: Cluster, cores: int) -> None:
    """Boot unreserved off nodes for ``cores``, only when the job can start once they are up.

    A job that must also wait for running jobs wakes nothing yet (booting early only idles).
    """
    free = ~cluster.reserved
    booting = int(np.count_nonzero(free & (cluster.state == NodeState.SWITCHING_ON)))
    deficit = cores - int(cluster.free_cores().sum()) - booting * cluster.cores_per_node
    if deficit <= 0:
        return
    off = np.flatnonzero(free & (cluster.state == NodeState.OFF))
    wanted = math.ceil(deficit / cluster.cores_per_node)
    if wanted > len(off):
        return
    for node in off[:wanted]:
        cluster.switch_on(int(node))


def schedule(
    cluster: Cluster, key: QueueKey, audit: list[tuple[int, float, float]] | None = None
) -> tuple[list[int], float]:
    """One EASY pass; returns the queue left in order and the first job's promised start.

    ``audit`` (tests) receives ``(first job, shadow before backfilling, shadow after)``.
    """
    jobs = cluster.jobs
    order = sorted(cluster.queue, key=lambda j: key(cluster, j))
    free_now = int(cluster.free_cores().sum())
    while order and jobs.cores[order[0]] <= free_now:
        free_now -= int(jobs.cores[order[0]])
        cluster.start(order.pop(0))
    if not order:
        return order, math.inf
    head = order[0]
    need = int(jobs.cores[head])
    wake_for(cluster, need)
    shadow, extra = shadow_time(cluster, need)
    now = cluster.engine.now()
    waiting = [head]
    for job in order[1:]:
        q = int(jobs.cores[job])
        fits_before = now + float(jobs.walltime[job]) <= shadow
        if q <= free_now and (fits_before or q <= extra):
            free_now -= q
            if not fits_before:
                extra -= q
            cluster.start(job)
        else:
            waiting.append(job)
    if audit is not None:
        audit.append((head, shadow, shadow_time(cluster, need)[0]))
    return waiting, shadow
