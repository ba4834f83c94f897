"""Paper 000 figures 7-11: overhead and good / wasted / total energy of ``bandit-cluster`` over the
epsilon x sigma grid, against ``random`` on the same campus."""

from __future__ import annotations

import argparse

from advisor.arg_types import comma_list, number
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

NAME = "epsilon-sigma"
HELP = "bandit-cluster over the epsilon x sigma grid (paper 000 figures 7-11)"
METRICS = (
    ("overhead_min", "mean overhead (min)"),
    ("good_mwh", "good energy (MWh)"),
    ("wasted_mwh", "wasted energy (MWh)"),
    ("total_mwh", "total energy (MWh)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_arguments(parser, scale=0.1, days=None)
    parser.add_argument("--policy", default="bandit-cluster")
    parser.add_argument("--epsilons", type=comma_list(number), default="0.01,0.05,0.1,0.2,0.3")
    parser.add_argument("--sigmas", type=comma_list(number), default="0,0.2,0.4,0.6,0.8,1")


def run(args: argparse.Namespace) -> int:
    eps, sig = args.epsilons, args.sigmas
    camp = {"scale": args.scale, "days": args.days, "seed": args.seed}
    tasks = [Task("random", **camp)]
    for e in eps:
        for s in sig:
            opts = (("epsilon", str(e)), ("sigma", str(s)))
            tasks.append(Task(args.policy, opts, labels=(("epsilon", e), ("sigma", s)), **camp))
    rows = run_tasks(tasks, args, NAME)
    base = baseline(rows)
    for r in rows:
        r["energy_ratio"] = r["total_mwh"] / base["total_mwh"]
        r["overhead_ratio"] = r["overhead_min"] / base["overhead_min"]
    write_csv(rows, args.out / "epsilon_sigma.csv")
    grid = rows[1:]
    for key, label in METRICS:
        fig, ax = figure(7, 4)
        for e in eps:
            ys = [r[key] for r in grid if r["epsilon"] == e]
            ax.plot(sig, ys, marker="o", label=f"epsilon {e}")
        ax.axhline(base[key], color="k", linestyle="--", label="random")
        tight_range(ax, [r[key] for r in rows])
        ax.set(xlabel="sigma", ylabel=label, title=f"{args.policy}: {scale_note(args)}")
        legend_outside(ax)
        save_plot(fig, args.out / f"{key}.png")
    fig, ax = figure(7, 4)
    for e in eps:
        mine = [r for r in grid if r["epsilon"] == e]
        xs, ys = [r["overhead_min"] for r in mine], [r["total_mwh"] for r in mine]
        ax.scatter(xs, ys, label=f"epsilon {e}")
    ax.scatter([base["overhead_min"]], [base["total_mwh"]], c="k", marker="x", label="random")
    ax.set(xlabel="mean overhead (min)", ylabel="total energy (MWh)")
    ax.set_title(f"{args.policy}, figure 11: {scale_note(args)}")
    legend_outside(ax)
    save_plot(fig, args.out / "overhead_vs_energy.png")
    best = min(grid, key=lambda r: r["total_mwh"])
    print(
        f"{scale_note(args)}; random: {base['total_mwh']:.3f} MWh, {base['overhead_min']:.2f} min"
    )
    for r in grid:
        print(
            f"eps {r['epsilon']:<5} sigma {r['sigma']:<4} total {r['total_mwh']:.3f} MWh "
            f"({r['energy_ratio']:.3f} x random) overhead {r['overhead_min']:.2f} min "
            f"({r['overhead_ratio']:.3f} x)"
        )
    print(f"lowest energy: epsilon {best['epsilon']} sigma {best['sigma']}")
    return 0
