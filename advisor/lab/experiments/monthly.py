"""Paper 000 figures 15-17: each bandit level's total HTC energy per month as a ratio to
``random``'s, at the paper's default setting (epsilon 0.1, sigma 0.8)."""

from __future__ import annotations

import argparse

from advisor.lab.experiments.levels import LEVELS
from advisor.lab.experiments.sweep_runs import (
    Task,
    add_campus_arguments,
    baseline,
    run_tasks,
    save_plot,
    scale_note,
    write_csv,
)
from simulator.plotting import figure, legend_outside, tight_range

NAME = "monthly"
HELP = "energy per month as a ratio to random, per bandit level (paper 000 figures 15-17)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_arguments(parser, scale=0.1, days=None)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")


def run(args: argparse.Namespace) -> int:
    camp = {"scale": args.scale, "days": args.days, "seed": args.seed}
    opts = tuple(tuple(kv.split("=", 1)) for kv in args.set)
    tasks = [Task("random", **camp)] + [Task(lv, opts, **camp) for lv in LEVELS]
    rows = run_tasks(tasks, args, NAME)
    base = baseline(rows)
    table = []
    for r in rows[1:]:
        for month, (mine, theirs) in enumerate(zip(r["months"], base["months"], strict=True), 1):
            ratio = mine / theirs if theirs else float("nan")
            table.append(
                {
                    "policy": r["policy"],
                    "month": month,
                    "mwh": mine,
                    "random_mwh": theirs,
                    "ratio": ratio,
                }
            )
    write_csv(table, args.out / "monthly.csv")
    fig, ax = figure(8, 4)
    for lv in LEVELS:
        mine = [t for t in table if t["policy"] == lv]
        ax.plot([t["month"] for t in mine], [t["ratio"] for t in mine], marker="o", label=lv)
    ax.axhline(1.0, color="k", linestyle="--", label="random")
    tight_range(ax, [1.0] + [t["ratio"] for t in table])
    ax.set_xticks(range(1, len(base["months"]) + 1))
    ax.set(xlabel="month", ylabel="energy / random's", title=scale_note(args))
    legend_outside(ax)
    save_plot(fig, args.out / "monthly_ratio.png")
    for r in rows[1:]:
        ratios = " ".join(f"{t['ratio']:.2f}" for t in table if t["policy"] == r["policy"])
        print(f"{r['policy']:<20} {ratios}")
    return 0
