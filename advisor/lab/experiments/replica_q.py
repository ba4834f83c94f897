"""Paper 003 figure 9: the replica bandit's learned value per hour of the day and replica count."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from advisor.lab.experiments.sweep_runs import (
    Task,
    add_campus_arguments,
    campus,
    save_plot,
    scale_note,
    write_csv,
)
from plugins.replicas.policies import MAX_REPLICAS, ReplicaBandit
from simulator.campus.replay import build_policy, replay
from simulator.plotting import figure, legend_outside

NAME = "replica-q"
HELP = "learned value per hour and replica count of replicas-bandit, DAY states (paper 003 fig. 9)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_arguments(parser, scale=0.05, days=None)
    parser.add_argument("--fraction", type=float, default=0.5, help="replicable share of the jobs")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")


def run(args: argparse.Namespace) -> int:
    task = Task("replicas-bandit", scale=args.scale, days=args.days, seed=args.seed)
    trace = campus(task.scale, task.days, task.seed, args.fraction)
    options: dict[str, Any] = dict(kv.split("=", 1) for kv in args.set)
    options["state"] = "DAY"
    policy = build_policy("replicas-bandit", trace, options, seed=args.seed)
    assert isinstance(policy, ReplicaBandit)
    replay(trace, policy, seed=args.seed)
    q = np.full((24, MAX_REPLICAS), np.nan)
    rows = []
    for hour, values in policy.q_table().items():
        for count, value in values.items():
            q[int(hour), count - 1] = value  # type: ignore[call-overload]
            rows.append({"hour": hour, "replicas": count, "q": value})
    write_csv(sorted(rows, key=lambda r: (r["hour"], r["replicas"])), args.out / "replica_q.csv")
    fig, ax = figure(8, 4)
    image = ax.imshow(
        q.T, origin="lower", aspect="auto", cmap="viridis", extent=(-0.5, 23.5, 0.5, 10.5)
    )
    best = np.nanargmax(np.where(np.isnan(q), -np.inf, q), axis=1) + 1
    learned = ~np.isnan(q).all(axis=1)  # an hour without a value has no best count
    ax.scatter(
        np.arange(24)[learned], best[learned], c="white", edgecolors="k", s=20, label="best count"
    )
    fig.colorbar(image, label="q'(hour, replicas)")
    ax.grid(False)
    ax.set(xlabel="hour of submission", ylabel="replicas", title=scale_note(args))
    ax.set_xticks(range(0, 24, 3))
    legend_outside(ax, where="below")
    save_plot(fig, args.out / "replica_q.png")
    print(scale_note(args), f"replicable {args.fraction}")
    print("best replica count per hour:", " ".join(str(int(b)) for b in best))
    return 0
