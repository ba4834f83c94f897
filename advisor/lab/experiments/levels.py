"""Paper 000 figures 12-13: the four bandit levels against ``random``, each at its lowest-overhead,
lowest-energy and matched-overhead setting from a small epsilon x sigma grid."""

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
from simulator.plotting import dot_chart, figure, legend_outside

NAME = "levels"
HELP = "computer / cluster / cluster-week / system bandits against random (paper 000 fig. 12-13)"
LEVELS = ("bandit-computer", "bandit-cluster", "bandit-cluster-week", "bandit-system")
PICKS = ("lowest overhead", "lowest energy", "matched overhead")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_arguments(parser, scale=0.1, days=None)
    parser.add_argument("--epsilons", type=comma_list(number), default="0.01,0.1,0.2")
    parser.add_argument("--sigmas", type=comma_list(number), default="0.4,0.8")


def pick(rows: list[dict], how: str, random_overhead: float) -> dict:
    if how == "lowest overhead":
        return min(rows, key=lambda r: r["overhead_min"])
    if how == "lowest energy":
        return min(rows, key=lambda r: r["total_mwh"])
    return min(rows, key=lambda r: abs(r["overhead_min"] - random_overhead))


def run(args: argparse.Namespace) -> int:
    camp = {"scale": args.scale, "days": args.days, "seed": args.seed}
    tasks = [Task("random", **camp)]
    for level in LEVELS:
        for e in args.epsilons:
            for s in args.sigmas:
                opts = (("epsilon", str(e)), ("sigma", str(s)))
                labels = (("epsilon", e), ("sigma", s))
                tasks.append(Task(level, opts, labels=labels, **camp))
    rows = run_tasks(tasks, args, NAME)
    base = baseline(rows)
    write_csv(rows, args.out / "levels_grid.csv")
    chosen = []
    for level in LEVELS:
        mine = [r for r in rows if r["policy"] == level]
        for how in PICKS:
            chosen.append(dict(pick(mine, how, base["overhead_min"]), setting=how))
    write_csv(chosen, args.out / "levels.csv")
    plot_levels(rows, chosen, base, args)
    print(f"{scale_note(args)}; random {base['total_mwh']:.3f} MWh, {base['overhead_min']:.2f} min")
    for r in chosen:
        print(
            f"{r['policy']:<20} {r['setting']:<17} eps {r['epsilon']:<5} sigma {r['sigma']:<4} "
            f"total {r['total_mwh']:.3f} MWh ({r['total_mwh'] / base['total_mwh']:.3f} x) "
            f"overhead {r['overhead_min']:.2f} min"
        )
    return 0


def plot_levels(rows: list[dict], chosen: list[dict], base: dict, args: argparse.Namespace) -> None:
    """Overhead and energy of each level's picks as points around random's line. When every
    setting is slower than random, the setting closest to random's overhead is the fastest one:
    matched overhead is then lowest overhead by the pick rule, drawn once and said so."""
    slower = all(r["overhead_min"] >= base["overhead_min"] for r in rows if r["policy"] in LEVELS)
    shown = {how: how for how in PICKS}
    note = ""
    if slower:
        shown = {"lowest overhead = matched": "lowest overhead", "lowest energy": "lowest energy"}
        note = (
            f"\nmatched overhead (closest to random's {base['overhead_min']:.1f} min) = lowest "
            "overhead: every setting of every level is slower than random"
        )
    for key, label, name, fmt in (
        ("overhead_min", "mean overhead (min)", "levels_overhead.png", "{:.0f}"),
        ("total_mwh", "total HTC energy (MWh)", "levels_energy.png", "{:.2f}"),
    ):
        fig, ax = figure(8, 4.5)
        series = {
            legend: [
                next(r[key] for r in chosen if r["policy"] == lv and r["setting"] == how)
                for lv in LEVELS
            ]
            for legend, how in shown.items()
        }
        levels = [lv.removeprefix("bandit-") for lv in LEVELS]
        random = (f"random ({fmt.format(base[key])})", base[key])
        dot_chart(ax, levels, series, reference=random, value_format=fmt)
        ax.set(xlabel="bandit level", ylabel=label)
        fig.suptitle(f"Bandit levels against random: {label}")
        ax.set_title(scale_note(args) + note, fontsize=8)
        legend_outside(ax)
        save_plot(fig, args.out / name)
