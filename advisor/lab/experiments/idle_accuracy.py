"""``experiment idle-accuracy``: r2 of the monthly-retrained RF and MLP per model group and month
(figure 7 of paper 004), and overhead versus energy of the ensembles against random (figure 6).

Figure 7 needs no replay: owner histories do not depend on the scheduler, so the models are
retrained month by month straight from the trace (sharing the model cache with the replays).
Figure 6 comes from ``--table2`` (written by ``idle-schedulers``) or from replaying ``--policies``.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import Any

from advisor.lab.experiments.idle_plots import plot_overhead_energy, plot_r2_by_month
from advisor.lab.experiments.idle_runs import (
    add_campus_args,
    monthly_accuracy,
    run_policies,
    table_rows,
    training_rows,
    write_csv,
)
from plugins.contract.config_checks import ConfigError

NAME = "idle-accuracy"
HELP = "figure 7 (r2 per month) and figure 6 (overhead vs energy) of paper 004 on the campus"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_args(parser)
    parser.add_argument("--policies", nargs="*", default=[], help="replay these for figure 6")
    parser.add_argument("--table2", type=Path, help="table2.csv of idle-schedulers for figure 6")


TABLE2 = ("policy", "seed", "energy_pct_random", "overhead_pct_random")
"""The columns of idle-schedulers' table2.csv figure 6 reads."""


def _read_table(path: Path) -> list[dict[str, Any]]:
    """Read first, before any replay: a wrong file is one line naming it, not a KeyError
    after the work (a spreadsheet's BOM and CRLF line ends are read too)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            table = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--table2 {path}: cannot be read ({exc})") from None
    missing = [c for c in TABLE2 if not table or c not in table[0]]
    if missing:
        raise ConfigError(
            f"--table2 {path}: no {', '.join(missing)} column(s); give the table2.csv "
            "that experiment idle-schedulers wrote"
        )
    rows: list[dict[str, Any]] = []
    for number, row in enumerate(table, start=2):
        try:
            pct = {k: float(row[k]) if row[k] else None for k in TABLE2[2:]}
        except ValueError:
            raise ConfigError(
                f"--table2 {path}:{number}: the percentages must be numbers"
            ) from None
        rows.append({**row, **pct})
    return rows


def run(args: argparse.Namespace) -> int:
    table2 = _read_table(args.table2) if args.table2 is not None else []
    runs = [monthly_accuracy(seed, args) for seed in args.seeds]
    accuracy = [{"seed": r["seed"], **a} for r in runs for a in r["accuracy"]]
    if not accuracy:
        raise ConfigError(
            f"--days {args.days}: no month boundary inside the window to retrain at and score "
            "the month after; figure 7 needs more than a month (e.g. --days 62)"
        )
    paths = [
        write_csv(args.out / "accuracy.csv", accuracy),
        write_csv(args.out / "training.csv", training_rows(runs)),
        plot_r2_by_month(accuracy, args.out / "fig7_r2_by_month.png"),
    ]
    rows = table_rows(run_policies(args, args.policies)) if args.policies else []
    rows += table2
    if rows:
        paths.append(plot_overhead_energy(rows, args.out / "fig6_overhead_energy.png"))
    for model in ("rf", "mlp"):
        values = sorted(a[f"r2_{model}"] for a in accuracy if a[f"r2_{model}"] == a[f"r2_{model}"])
        if values:
            print(f"{model}: median r2 {values[len(values) // 2]:.3f} over {len(values)} scores")
    for path in paths:
        print(f"wrote {path}")
    return 0
