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


def tiny_agent(seed: int = 0, hidden: int = 8) -> dict[str, dict[str, np.ndarray]]:
    """An untrained or-ppo agent as a host hands it over (option ``agent``)."""
    from plugins.power.features import HISTORY, OBSERVATION_SIZE
    from plugins.power.ppo import init_params

    rng = np.random.default_rng(seed)
    return {"params": init_params(HISTORY * OBSERVATION_SIZE, hidden, 9, rng, favour=(0, 8))}
