"""Paper 000 figures 18-19: ``bandit-cluster`` with every reward, the last N, or gaussian-weighted
last N rewards in its estimates (eq. 3, sec. 4.4.1, eq. 7-8): overhead and energy."""

from __future__ import annotations

import argparse

from advisor.arg_types import comma_list, count
from advisor.lab.experiments.sweep_runs import (
    Task,
    add_campus_arguments,
    baseline,
    run_tasks,
    save_plot,
    scale_note,
    write_csv,
)
from simulator.plotting import dot_chart, figure, legend_outside

NAME = "history"
HELP = "reward history: all, last:N, gaussian:N (paper 000 figures 18-19)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_arguments(parser, scale=0.1, days=None)
    parser.add_argument("--sizes", type=comma_list(count), default="10,100,1000")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")


def run(args: argparse.Namespace) -> int:
    camp = {"scale": args.scale, "days": args.days, "seed": args.seed}
    extra = tuple(tuple(kv.split("=", 1)) for kv in args.set)
    histories = ["all"] + [f"{k}:{n}" for k in ("last", "gaussian") for n in args.sizes]
    tasks = [Task("random", **camp)] + [
        Task("bandit-cluster", (("history", h), *extra), labels=(("history", h),), **camp)
        for h in histories
    ]
    rows = run_tasks(tasks, args, NAME)
    base = baseline(rows)
    write_csv(rows, args.out / "history.csv")
    for key, label, fmt in (
        ("overhead_min", "mean overhead (min)", "{:.0f}"),
        ("total_mwh", "total HTC energy (MWh)", "{:.3f}"),
    ):
        fig, ax = figure(8, 4)
        series = {"bandit-cluster": [r[key] for r in rows[1:]]}
        random = (f"random ({fmt.format(base[key])})", base[key])
        dot_chart(ax, histories, series, reference=random, value_format=fmt)
        ax.set(xlabel="reward history", ylabel=label, title=scale_note(args))
        ax.tick_params(axis="x", rotation=30)
        legend_outside(ax)
        save_plot(fig, args.out / f"history_{key}.png")
    for r in rows[1:]:
        print(
            f"{r['history']:<14} total {r['total_mwh']:.3f} MWh "
            f"({r['total_mwh'] / base['total_mwh']:.3f} x) overhead {r['overhead_min']:.2f} min"
        )
    return 0
