"""The M/M/N workloads of paper 002, Table I: Poisson arrivals, exponential execution times."""

from __future__ import annotations

import numpy as np

from plugins.utility.functions import INTERACTIVE_LIMIT_S
from simulator.grid_queue.workload import GridWorkload

VO_WEIGHTS = (0.7, 0.2, 0.05, 0.05)
"""The actual VO proportions of the synthetic jobs (sec. VI-A)."""
INFEASIBLE_SHARES = (0.4, 0.2, 0.2, 0.2)
"""Targets the workload cannot meet (sec. VI-B)."""


def vo_names(n: int) -> list[str]:
    return [f"vo{k}" for k in range(n)]


def mmn_workload(
    interactive_fraction: float,
    *,
    feasible: bool = True,
    seed: int = 0,
    jobs: int = 6000,
    processors: int = 50,
    rho: float = 0.99,
) -> GridWorkload:
    """P(X < 15 min) = fraction gives mu; lambda = mu rho P (sec. V-B); VOs .7/.2/.05/.05."""
    if not 0 < interactive_fraction < 1:
        raise ValueError("interactive_fraction must be in (0, 1)")
    rng = np.random.default_rng(seed)
    mu = -np.log(1.0 - interactive_fraction) / INTERACTIVE_LIMIT_S
    lam = mu * rho * processors
    submit = np.cumsum(rng.exponential(1.0 / lam, jobs))
    runtime = rng.exponential(1.0 / mu, jobs)
    names = vo_names(len(VO_WEIGHTS))
    group = [names[k] for k in rng.choice(len(names), size=jobs, p=VO_WEIGHTS)]
    weights = VO_WEIGHTS if feasible else INFEASIBLE_SHARES
    kind = "feasible" if feasible else "infeasible"
    return GridWorkload(
        name=f"mmn-{interactive_fraction:g}-{kind}",
        processors=processors,
        submit=submit - submit[0],
        runtime=runtime,
        group=group,
        shares=dict(zip(names, weights, strict=True)),
    )
