"""``experiment utility-synthetic``: paper 002, sec. VI-A/B on the M/M/50 workloads of Table I.

For each interactive fraction (20/40/50%) and target (feasible, infeasible): fifo, edf, sjf
(the reference for mean waiting without preemption) and utility-sarsa on the same jobs; SARSA is
warm-started off-line on EDF's decisions over a workload of another seed. Writes Table II as
CSV, figure 3 (CDFs) and figures 4/5 (fair-share over time).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from advisor.arg_types import comma_list, count, number, output_directory, whole_number
from advisor.lab.experiments.utility_report import (
    plot_cdfs,
    plot_fairness,
    print_table,
    write_stats,
)
from advisor.lab.parallel import run_parallel
from plugins.contract.option_pairs import parse_sets
from plugins.contract.policy import OptionError, parse_options
from plugins.contract.registry import policy_class
from simulator.grid_queue.synthetic import mmn_workload
from simulator.grid_queue.trial import Trial, run_trial
from simulator.grid_queue.workload import DRAIN_JOBS

NAME = "utility-synthetic"
HELP = "paper 002 Table II and figures 3-5: fifo, edf, utility-sarsa on M/M/50 workloads"
POLICIES = ("fifo", "edf", "sjf", "utility-sarsa")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=output_directory,
        default="out/utility-synthetic",
        help="directory for CSV and PNG",
    )
    parser.add_argument(
        "--fractions", type=comma_list(number), default="0.2,0.4,0.5", help="interactive fractions"
    )
    parser.add_argument(
        "--jobs", type=count, default=6000, help="jobs per workload (Table I: 6000)"
    )
    parser.add_argument(
        "--seed", type=whole_number, default=1, help="workload seed (training: seed+1000)"
    )
    parser.add_argument("--workers", type=count, default=2, help="parallel runs (at most 2 here)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="utility-sarsa option, e.g. --set epsilon=0.1")  # fmt: skip


def trials(args: argparse.Namespace) -> list[Trial]:
    """Every run, its options and workloads checked before any runs (each takes seconds)."""
    extra = parse_sets(args.set)
    parse_options(policy_class("utility-sarsa"), extra)
    if args.jobs <= DRAIN_JOBS:
        raise OptionError(
            f"--jobs {args.jobs}: the last {DRAIN_JOBS} jobs are not counted (the queue drains"
            f" then, paper 002 sec. V-B): give more, e.g. --jobs {DRAIN_JOBS + 1000}"
        )
    wrong = [f for f in args.fractions if not 0.0 < f < 1.0]
    if wrong:
        raise OptionError(f"--fractions: each must lie between 0 and 1, got {wrong[0]:g}")
    out = []
    for fraction in args.fractions:
        for feasible in (True, False):
            build = {"interactive_fraction": fraction, "feasible": feasible, "jobs": args.jobs}
            for policy in POLICIES:
                learner = policy == "utility-sarsa"
                out.append(
                    Trial(
                        mmn_workload,
                        {**build, "seed": args.seed},
                        policy,
                        options=extra if learner else {},
                        train_args={**build, "seed": args.seed + 1000} if learner else None,
                        seed=args.seed,
                    )
                )
    return out


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = run_parallel(run_trial, trials(args), workers=args.workers, desc="utility runs")
    write_stats(results, out / "waiting_stats.csv")
    print_table(results)
    by_workload: dict[str, list] = {}
    for r in results:
        by_workload.setdefault(r.workload, []).append(r)
    for name, group in by_workload.items():
        plot_cdfs(group, out / f"fig3_cdf_{name}.png", f"{name}: interactive jobs")
        plot_fairness(group, out / f"fig4_fairness_{name}.png", f"{name}: fair-share utility")
    print(f"wrote {out}/waiting_stats.csv and {2 * len(by_workload)} figures")
    return 0
