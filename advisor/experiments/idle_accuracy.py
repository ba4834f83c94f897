"""``experiment idle-accuracy``: r2 of the monthly-retrained RF and MLP per machine and month
(figure 7 of paper 004), and overhead versus energy of the ensembles against random (figure 6)."""

from __future__ import annotations

import argparse

from advisor.experiments.idle_plots import plot_overhead_energy, plot_r2_by_month
from advisor.experiments.idle_runs import (
    ENSEMBLES,
    add_campus_args,
    run_policies,
    table_rows,
    training_rows,
    write_csv,
)

NAME = "idle-accuracy"
HELP = "figure 7 (r2 per month) and figure 6 (overhead vs energy) of paper 004 on the campus"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_args(parser)
    parser.add_argument(
        "--policies", nargs="+", default=["random", *ENSEMBLES], help="random and idle-* policies"
    )


def run(args: argparse.Namespace) -> int:
    results = run_policies(args, list(args.policies))
    accuracy: list[dict] = next((r["accuracy"] for r in results if r.get("accuracy")), [])
    rows = table_rows(results)
    paths = [
        write_csv(args.out / "accuracy.csv", accuracy),
        write_csv(args.out / "training.csv", training_rows(results)),
        plot_r2_by_month(accuracy, args.out / "fig7_r2_by_month.png"),
        plot_overhead_energy(rows, args.out / "fig6_overhead_energy.png"),
    ]
    for model in ("rf", "mlp"):
        values = sorted(a[f"r2_{model}"] for a in accuracy if a[f"r2_{model}"] == a[f"r2_{model}"])
        if values:
            print(f"{model}: median r2 {values[len(values) // 2]:.3f} over {len(values)} scores")
    for path in paths:
        print(f"wrote {path}")
    return 0
