"""Paper 003 figures 4-8: fixed replica counts 1-4 and the replica bandit's six state spaces, with
the wasted-energy or contender penalty: QoS failures and good / wasted energy, per replicable
fraction of the jobs."""

from __future__ import annotations

import argparse

from advisor.arg_types import comma_list, number
from advisor.lab.experiments.sweep_runs import (
    Task,
    add_campus_arguments,
    run_tasks,
    save_plot,
    scale_note,
    write_csv,
)
from plugins.replicas.policies import STATE_SPACES
from simulator.plotting import dot_chart, figure, legend_outside

NAME = "replicas"
HELP = "fixed replica counts and the replica bandit's state spaces (paper 003 figures 4-8)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_arguments(parser, scale=0.05, days=None)
    parser.add_argument(
        "--fractions",
        type=comma_list(number),
        default="0.2,0.5",
        help="replicable share of the jobs",
    )
    parser.add_argument("--penalties", default="wasted,contender")
    parser.add_argument("--delta", default="0.5")
    parser.add_argument("--qos", default="within-hour")


Variant = tuple[str, tuple[tuple[str, str], ...], str]


def variants(args: argparse.Namespace) -> list[Variant]:
    out: list[Variant] = [
        ("replicas-fixed", (("replicas", str(n)),), f"fixed {n}") for n in range(1, 5)
    ]
    for penalty in args.penalties.split(","):
        for state in STATE_SPACES:
            opts = (
                ("state", state),
                ("penalty", penalty),
                ("delta", args.delta),
                ("qos", args.qos),
            )
            out.append(("replicas-bandit", opts, f"{state} {penalty}"))
    return out


def run(args: argparse.Namespace) -> int:
    fractions = args.fractions
    camp = {"scale": args.scale, "days": args.days, "seed": args.seed}
    tasks = [
        Task(policy, opts, replicable=f, labels=(("fraction", f), ("variant", label)), **camp)
        for f in fractions
        for policy, opts, label in variants(args)
    ]
    rows = run_tasks(tasks, args, NAME)
    write_csv(rows, args.out / "replicas.csv")
    labels = [label for _, _, label in variants(args)]
    fail_key = "qos_fail_" + args.qos.replace(":", "_")
    for key, ylabel in (
        (fail_key, f"jobs failing QoS ({args.qos})"),
        ("good_mwh", "good energy (MWh)"),
        ("wasted_mwh", "wasted energy (MWh)"),
        ("total_mwh", "total energy (MWh)"),
    ):
        fig, ax = figure(10, 4.5)
        series = {
            f"replicable {f:g}": [r[key] for r in rows if r["fraction"] == f] for f in fractions
        }
        dot_chart(ax, labels, series)
        ax.tick_params(axis="x", rotation=60, labelsize=7)
        ax.set(ylabel=ylabel, title=scale_note(args))
        legend_outside(ax)
        save_plot(fig, args.out / f"replicas_{key}.png")
    print(scale_note(args))
    for r in rows:
        print(
            f"fraction {r['fraction']:<4} {r['variant']:<22} QoS fails {r[fail_key]:>7} "
            f"good {r['good_mwh']:.3f} wasted {r['wasted_mwh']:.3f} MWh "
            f"overhead {r['overhead_min']:.2f} min"
        )
    return 0
