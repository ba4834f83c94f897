"""Policies on pools shaped differently from the bundled campus (``simulator/campus/shapes.yaml``):
per member (shape, scale, seed) each policy's energy and mean overhead against random's, and its
share of the achievable saving, (random - policy) / (random - crystal)."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from advisor.agent_files import missing_agent, with_agent
from advisor.arg_types import (
    comma_list,
    count,
    hours_from_zero,
    output_directory,
    positive_number,
    unreadable,
    whole_number,
)
from advisor.lab.experiments.day_bootstrap import MIN_DAYS, ratio_interval, share_interval
from advisor.lab.experiments.shapes_plot import plot
from advisor.lab.experiments.sweep_runs import Task, run_tasks, write_csv
from advisor.lab.sweep.executors import add_executor_arguments
from plugins.contract.config_checks import ConfigError
from plugins.contract.policy import parse_options
from plugins.contract.registry import policy_class, policy_for
from simulator.campus.scenario import load_campus_config
from simulator.campus.shapes import load_shapes
from simulator.sources import thinned
from simulator.trace_model import PARTITIONABLE, SINGLE, Jobs
from simulator.traces import read_jobs

NAME = "shapes"
HELP = "policies on differently shaped pools against random and crystal (saving share, overhead)"
OVERHEAD_LIMIT, SHARE_TARGET = 1.05, 0.6
"""What a policy should hold on every shape: at most 5% more overhead than random, at least 60%
of the achievable saving."""
CYCLE_MIN = 1.0
"""One negotiation cycle (the replay's negotiator runs every 60 s, as HTCondor's default)."""
BASELINES = ("random", "crystal")
"""Replayed on every member: the achievable saving is random's energy less crystal's."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shapes", default="all", help="shape names, comma-separated, or all")
    parser.add_argument(
        "--shapes-file", type=Path, default=None,
        help="YAML of your own pool shapes (default: the shipped ones; docs/shapes.md)",
    )  # fmt: skip
    parser.add_argument(
        "--jobs", type=Path, default=None, metavar="FILE",
        help="replay your own jobs (a jobs CSV, e.g. from `trace history`) on every member in "
        "place of its generated ones",
    )  # fmt: skip
    parser.add_argument("--policies", default="frugal,bandit-cluster", help="besides the two")
    parser.add_argument(
        "--set", action="append", default=[], metavar="POLICY.KEY=VALUE",
        help="an option of one of --policies (e.g. frugal.payback=off), repeatable",
    )  # fmt: skip
    parser.add_argument(
        "--wait-bound", type=hours_from_zero, default=24.0, metavar="HOURS",
        help="the starvation bound of every replay, as deployed (0: none, as the papers ran)",
    )  # fmt: skip
    parser.add_argument(
        "--slots", choices=[SINGLE, PARTITIONABLE], default=SINGLE,
        help="how every machine takes jobs (docs/slots.md; default: single, as the papers ran)",
    )  # fmt: skip
    parser.add_argument(
        "--scales", type=comma_list(positive_number), default=[1.0, 0.25], help="e.g. 1,0.25"
    )
    parser.add_argument("--seeds", type=comma_list(whole_number), default=[1, 2], help="e.g. 1,2")
    parser.add_argument(
        "--no-job-edits",
        action="store_true",
        help="replay the policies as a pool where the daemon does not edit jobs (pool.edit_jobs "
        "false; random and crystal are unchanged)",
    )
    parser.add_argument("--days", type=count, default=None, help="days to replay (default: a year)")
    parser.add_argument("--workers", type=count, default=None, help="parallel replays (local)")
    parser.add_argument(
        "--out", type=output_directory, required=True, help="directory for the CSV and PNG"
    )
    add_executor_arguments(parser)


def members(args: argparse.Namespace) -> list[tuple[str, str, float, int]]:
    """(shape, its ranges as JSON when from ``--shapes-file``, scale, seed) per member."""
    problem = args.shapes_file and unreadable(args.shapes_file)
    if problem:
        raise ConfigError(f"--shapes-file: {problem}")
    known = load_shapes(args.shapes_file, load_campus_config(None).opening_hours)
    names = list(known) if args.shapes == "all" else args.shapes.split(",")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"--shapes: unknown {unknown[0]!r}; available: {', '.join(known)}")
    specs = {n: json.dumps(known[n]) if args.shapes_file else "" for n in names}
    scales, seeds = dict.fromkeys(args.scales), dict.fromkeys(args.seeds)  # each once
    return [(n, specs[n], scale, seed) for n in names for scale in scales for seed in seeds]


def own_jobs(path: Path | None, scales: list[float]) -> tuple[Jobs | None, str]:
    """The jobs of ``--jobs``, read (a bad file: one located line) before any replay, and a
    digest of the file that names them in each task's id, so another file is replayed anew.
    Each scale below 1 keeps that share of the file's batches (``simulator.sources.thinned``)."""
    if path is None:
        return None, ""
    problem = unreadable(path)
    if problem:
        raise ConfigError(f"--jobs: {problem}")
    jobs = read_jobs(path)
    if not len(jobs):
        raise ConfigError(f"--jobs: {path} lists no jobs; give a file with at least one")
    print(f"{path}: {len(jobs)} jobs, replayed on every member in place of its own")
    for scale in scales:
        kept, note = thinned(jobs, scale)
        if not len(kept):
            raise ConfigError(
                f"--jobs: {path} has no job left at scale {scale}; give a larger --scales"
            )
        if note:
            print(f"{path}: {note}")
    return jobs, hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def policy_options(
    settings: list[str], policies: list[str]
) -> dict[str, tuple[tuple[str, str], ...]]:
    """``--set POLICY.KEY=VALUE`` as each policy's options, checked (and the policies' names)
    before any replay."""
    for name in policies:
        policy_for(name, "campus")  # an unknown name, or one that cannot act here: OptionError
    chosen: dict[str, dict[str, str]] = {}
    for item in settings:
        name, _, pair = item.partition(".")
        key, sep, value = pair.partition("=")
        if name not in policies or not key or not sep:
            raise ConfigError(
                f"--set {item!r}: expected POLICY.KEY=VALUE with POLICY one of --policies "
                f"({', '.join(policies)})"
            )
        chosen.setdefault(name, {})[key] = value
    for name, options in chosen.items():
        parse_options(policy_class(name), options)  # an unknown key or bad value: OptionError
        with_agent(name, options)  # an agent file that cannot be read: said now, not mid-run
    for name in policies:  # a policy that runs an agent and was given none: said now too
        problem = missing_agent(name, chosen.get(name, {}))
        if problem:
            raise ConfigError(f"--set {name}.agent: {problem}")
    return {name: tuple(sorted(options.items())) for name, options in chosen.items()}


def ratio(mine: float | None, randoms: float | None) -> float:
    """``mine / randoms``; a few jobs of one's own may never wait under random placement, and
    then waiting as little is 1 and waiting at all is worse by more than any factor. None (no
    job completed, so no overhead) compares with nothing: NaN."""
    if mine is None or randoms is None:
        return math.nan
    if randoms > 0:
        return mine / randoms
    return 1.0 if mine <= 0 else math.inf


def compare(rows: list[dict[str, Any]], policies: list[str]) -> list[dict[str, Any]]:
    """One row per member and policy: ratios to random, saving share, the tail of the waits."""
    out = []
    by_member: dict[tuple[str, float, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_member.setdefault((r["shape"], r["scale"], r["seed"]), {})[r["policy"]] = r
    for (shape, scale, seed), got in by_member.items():
        random, crystal = got["random"], got["crystal"]
        achievable = random["total_mwh"] - crystal["total_mwh"]
        for policy in ["crystal", *policies]:
            r = got[policy]
            saving = random["total_mwh"] - r["total_mwh"]
            low, high = ratio_interval(r["overhead_days"], random["overhead_days"])
            share_low, share_high = share_interval(
                r["energy_days"], random["energy_days"], crystal["energy_days"]
            )
            out.append(
                {
                    "shape": shape,
                    "scale": scale,
                    "seed": seed,
                    "policy": policy,
                    "energy_vs_random": ratio(r["total_mwh"], random["total_mwh"]),
                    "overhead_vs_random": ratio(r["overhead_min"], random["overhead_min"]),
                    "overhead_vs_random_low": low,
                    "overhead_vs_random_high": high,
                    "saving_share": saving / achievable if achievable > 0 else float("nan"),
                    "saving_share_low": share_low,
                    "saving_share_high": share_high,
                    "random_mwh": random["total_mwh"],
                    "random_overhead_min": random["overhead_min"],
                    "overhead_min": r["overhead_min"],
                    "overhead_p99_min": r["overhead_p99_min"],
                    "overhead_max_min": r["overhead_max_min"],
                    "random_overhead_p99_min": random["overhead_p99_min"],
                    "random_overhead_max_min": random["overhead_max_min"],
                }
            )
    return out


def run(args: argparse.Namespace) -> int:
    policies = [p for p in args.policies.split(",") if p not in BASELINES]
    bound = args.wait_bound * 3600.0 if args.wait_bound > 0 else None
    options = policy_options(args.set, policies)
    jobs, digest = own_jobs(args.jobs, args.scales)
    tasks = [
        Task(
            policy,
            options=options.get(policy, ()),
            scale=scale,
            days=args.days,
            seed=seed,
            slots=args.slots,
            shape=shape,
            shape_spec=spec,
            wait_bound_s=bound,
            job_edits=not args.no_job_edits or policy in BASELINES,
            jobs=jobs,
            jobs_digest=digest,
        )
        for shape, spec, scale, seed in members(args)
        for policy in [*BASELINES, *policies]
    ]
    rows = run_tasks(tasks, args, NAME)
    write_csv(rows, args.out / "shapes_runs.csv")
    table = compare(rows, policies)
    write_csv(table, args.out / "shapes.csv")
    plot(table, args.out / "shapes.png", OVERHEAD_LIMIT, SHARE_TARGET)
    for policy in policies:
        mine = [r for r in table if r["policy"] == policy]
        passed = sum(
            r["overhead_vs_random"] <= OVERHEAD_LIMIT and r["saving_share"] >= SHARE_TARGET
            for r in mine
        )
        sure = sum(r["overhead_vs_random_low"] > OVERHEAD_LIMIT for r in mine)
        short = sum(r["saving_share_high"] < SHARE_TARGET for r in mine)
        shares = [r["saving_share"] for r in mine if not math.isnan(r["saving_share"])]
        spread = f"{min(shares):.2f} to {max(shares):.2f}" if shares else "n/a (nothing to save)"
        print(
            f"{policy:<16} passes {passed} of {len(mine)} members; {worst_overhead(mine)}; past "
            f"{OVERHEAD_LIMIT} x beyond chance on {sure}; saving share "
            f"{spread}, below {SHARE_TARGET} beyond chance on "
            f"{short}{waits_past_random(mine, args.wait_bound)}"
        )
    return 0


def worst_overhead(mine: list[dict[str, Any]]) -> str:
    """The summary line's worst overhead ratio, among the members where one was measured."""
    judged = [r for r in mine if not math.isnan(r["overhead_vs_random"])]
    unjudged = len(mine) - len(judged)
    none = f" (none on {unjudged}: no job completed)" if unjudged else ""
    if not judged:
        return f"worst overhead n/a{none}"
    worst = max(judged, key=lambda r: r["overhead_vs_random"])
    return (
        f"worst overhead {worst['overhead_vs_random']:.2f} x random ({interval(worst)}; "
        f"{worst['shape']}, scale {worst['scale']}, seed {worst['seed']}){none}"
    )


def interval(row: dict[str, Any]) -> str:
    """A row's overhead interval, as the summary line says it."""
    low, high = row["overhead_vs_random_low"], row["overhead_vs_random_high"]
    if math.isnan(low):
        return f"no interval: jobs on fewer than {MIN_DAYS} days"
    return f"95% interval over days {low:.2f} to {high:.2f}"


def waits_past_random(mine: list[dict[str, Any]], bound_h: float) -> str:
    """The members whose longest wait passes random placement's longest by more than the
    starvation bound and a negotiation cycle (issue 26's starvation target; docs/robust-policies.md
    shows how far random placement's own longest wait moves between two random streams)."""
    if bound_h <= 0:
        return ""
    slack = bound_h * 60.0 + CYCLE_MIN
    late = [
        f"{r['shape']} {r['scale']} seed {r['seed']} by "
        f"{r['overhead_max_min'] - r['random_overhead_max_min']:.0f} min"
        for r in mine
        if r["overhead_max_min"] > r["random_overhead_max_min"] + slack
    ]
    return f"; longest wait past random's by more than the bound: {', '.join(late) or 'none'}"
