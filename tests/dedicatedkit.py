"""Small hand-made dedicated-cluster workloads for the tests."""

from __future__ import annotations

import numpy as np

from simulator.dedicated.workload import Workload


def workload(nodes: int, cores: int, jobs: list[tuple[float, int, float, float]]) -> Workload:
    """``jobs``: (arrival s, cores, walltime s, runtime s), user 1 for all."""
    a = np.array(jobs, dtype=float).reshape(-1, 4)
    return Workload(
        "test", nodes, cores, a[:, 0], a[:, 1].astype(np.int64), a[:, 2], a[:, 3],
        np.ones(len(a), dtype=np.int64),
    )  # fmt: skip


def random_workload(rng: np.random.Generator, nodes: int, cores: int, n: int) -> Workload:
    """``n`` jobs over a morning; runtime up to the walltime (sometimes exactly it)."""
    arrival = np.sort(rng.uniform(0, 6 * 3600, n))
    q = rng.integers(1, nodes * cores + 1, n)
    wall = rng.choice([300.0, 900.0, 1800.0, 3600.0], n)
    run = np.where(rng.random(n) < 0.3, wall, wall * rng.uniform(0.05, 1.0, n))
    return workload(nodes, cores, list(zip(arrival, q, wall, run, strict=True)))
