"""``experiment idle-schedulers``: Table II of paper 004 (overhead, total, productive and wasted
energy for random, crystal and every idle ensemble) and the figure 6 scatter."""

from __future__ import annotations

import argparse

from advisor.lab.experiments.idle_plots import plot_overhead_energy
from advisor.lab.experiments.idle_runs import (
    ENSEMBLES,
    add_campus_args,
    run_policies,
    table_rows,
    training_rows,
    write_csv,
)

NAME = "idle-schedulers"
HELP = "Table II of paper 004: random, crystal and the idle-time ensembles on the campus"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_args(parser)
    parser.add_argument(
        "--policies", nargs="+", default=["random", "crystal", *ENSEMBLES], help="policies to run"
    )


def run(args: argparse.Namespace) -> int:
    results = run_policies(args, list(args.policies))
    rows = table_rows(results)
    paths = [
        write_csv(args.out / "table2.csv", rows),
        write_csv(args.out / "training.csv", training_rows(results)),
        plot_overhead_energy(rows, args.out / "fig6_overhead_energy.png"),
    ]
    print(
        f"{'seed':>4} {'policy':<16} {'overhead':>9} {'energy':>8} {'good':>7} {'wasted':>7}"
        f" {'E%rand':>7} {'O%rand':>7}"
    )
    for r in rows:
        pct = [
            f"{r[k]:7.1f}" if r[k] is not None else "      -"
            for k in ("energy_pct_random", "overhead_pct_random")
        ]
        print(
            f"{r['seed']:>4} {r['policy']:<16} {r['overhead_min']:9.2f} {r['energy_mwh']:8.3f}"
            f" {r['productive_mwh']:7.3f} {r['wasted_mwh']:7.3f} {pct[0]} {pct[1]}"
        )
    for path in paths:
        print(f"wrote {path}")
    return 0
