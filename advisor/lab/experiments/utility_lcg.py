"""``experiment utility-lcg``: paper 002, sec. VI-C on one site of the LCG 2005 grid log.

fifo, edf and utility-sarsa on P processors (default 100), VO = SWF group, shares = the VOs' work
proportions. SARSA warms up in-run (its first ``warm_decisions`` decisions follow EDF, then it is
trained on them and learns online): the trace has no second, independent part to train on.
Writes Table III as CSV, figure 6 (CDFs, fifo - sarsa wait by arrival), figure 7 (fair-share).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from advisor.arg_types import count, output_directory
from advisor.lab.experiments.utility_report import (
    plot_cdfs,
    plot_fairness,
    plot_wait_difference,
    print_table,
    write_stats,
)
from advisor.lab.parallel import run_parallel
from plugins.contract.option_pairs import parse_sets
from simulator.dedicated.catalog import default_data_dir
from simulator.grid_queue.lcg import DEFAULT_SITE, lcg_workload
from simulator.grid_queue.trial import Trial, run_trial
from simulator.grid_queue.workload import DRAIN_JOBS

NAME = "utility-lcg"
HELP = "paper 002 Table III and figures 6-7: fifo, edf, utility-sarsa on an LCG 2005 site"
LCG_LOG = "b_workloads/LCG-2005-1/LCG-2005-1.swf.gz"
"""Under the data directory (``ADVISOR_DATA_DIR``, else ``../shared/data``)."""
POLICIES = ("fifo", "edf", "utility-sarsa")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--swf", help=f"the LCG-2005-1 SWF log (default: $ADVISOR_DATA_DIR/{LCG_LOG})"
    )
    parser.add_argument(
        "--out", type=output_directory, default="out/utility-lcg", help="directory for CSV and PNG"
    )
    parser.add_argument("--site", type=int, default=DEFAULT_SITE, help="SWF partition (site)")
    parser.add_argument("--processors", type=int, default=100, help="P (paper: 100)")
    parser.add_argument("--jobs", type=counted_jobs, default=6000, help="first jobs of the site")
    parser.add_argument("--workers", type=count, default=2, help="parallel runs (at most 2 here)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="utility-sarsa option, e.g. --set epsilon=0.1")  # fmt: skip


def counted_jobs(text: str) -> int:
    """``--jobs``: more than the last DRAIN_JOBS, which drain the queue and are not counted."""
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if jobs <= DRAIN_JOBS:
        raise argparse.ArgumentTypeError(
            f"{jobs} leaves no job counted (the last {DRAIN_JOBS} drain the queue, paper 002 "
            f"sec. V-B); give more than {DRAIN_JOBS}"
        )
    return jobs


def run(args: argparse.Namespace) -> int:
    swf = args.swf or str(Path(default_data_dir()) / LCG_LOG)
    if not Path(swf).is_file():
        raise FileNotFoundError(f"{swf}: no such SWF log (pass --swf PATH or set ADVISOR_DATA_DIR)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    build = {"path": swf, "partition": args.site, "processors": args.processors}
    extra = parse_sets(args.set)
    trials = [
        Trial(lcg_workload, {**build, "jobs": args.jobs}, p, extra if p == POLICIES[-1] else {})
        for p in POLICIES
    ]
    results = run_parallel(run_trial, trials, workers=args.workers, desc="utility runs")
    write_stats(results, out / "waiting_stats.csv")
    print_table(results)
    fifo, sarsa = results[0], results[-1]
    name = fifo.workload
    plot_cdfs(results, out / f"fig6_cdf_{name}.png", f"{name}: interactive jobs")
    plot_wait_difference(fifo, sarsa, out / f"fig6_wait_difference_{name}.png")
    plot_fairness(results, out / f"fig7_fairness_{name}.png", f"{name}: fair-share utility")
    gap = np.abs(fifo.fairness - sarsa.fairness)
    print(f"fair-share |fifo - sarsa|: max {gap.max():.4f}, end {gap[-1]:.4f}")
    print(f"wrote {out}/waiting_stats.csv and 3 figures")
    return 0
