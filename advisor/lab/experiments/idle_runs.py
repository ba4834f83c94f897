"""Shared by the idle-accuracy and idle-schedulers experiments: campus replays of idle policies
whose monthly fits are cached on disk (``advisor.lab.training_map.cached_map``), so every ensemble
on one trace reuses the models the first one trained."""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from advisor.arg_types import count, output_directory, positive_number, whole_number
from advisor.lab.idle_training import load_history
from advisor.lab.parallel import run_parallel
from advisor.lab.progress import terminal_bar
from advisor.lab.training_map import Map, cached_map, process_map
from plugins.contract.option_pairs import parse_sets
from simulator.campus.month_stats import month_starts
from simulator.campus.replay import build_policy, replay
from simulator.campus.scenario import generate_campus, load_campus_config
from simulator.campus.summary import summarize

ENSEMBLES = [
    "idle-rf",
    "idle-mlp",
    "idle-max",
    "idle-min",
    "idle-avg",
    "idle-last-month",
    "idle-best-avg",
]


def add_campus_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--days", type=count, default=365, help="days of the campus year")
    parser.add_argument("--scale", type=positive_number, default=1.0, help="shrink the campus")
    parser.add_argument("--seeds", type=whole_number, nargs="+", default=[1], help="scenario seeds")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="idle-* option")
    parser.add_argument("--workers", type=count, help="processes (default: one per core)")
    parser.add_argument(
        "--out", type=output_directory, required=True, help="directory for CSV and PNG"
    )


@dataclass(frozen=True)
class Run:
    policy: str
    seed: int
    days: int
    scale: float
    options: tuple[tuple[str, str], ...]
    cache: Path
    fit_workers: int


def run_one(run: Run) -> dict[str, Any]:
    """One replay; for an idle policy also its training log and monthly accuracy."""
    from plugins.idle.policy import IdlePolicy  # scikit-learn: not at CLI start-up

    trace = generate_campus(load_campus_config(), run.days, run.scale, run.seed)
    inner: Map = process_map(run.fit_workers, progress=False) if run.fit_workers > 1 else _serial
    fits = cached_map(inner, run.cache / f"seed{run.seed}-scale{run.scale}-days{run.days}")
    options = dict(run.options) if run.policy.startswith("idle-") else {}
    policy = build_policy(run.policy, trace, options, seed=run.seed, parallel_map=fits)
    summary = summarize(replay(trace, policy, seed=run.seed))
    out: dict[str, Any] = {"seed": run.seed, "summary": summary}
    if isinstance(policy, IdlePolicy):
        out["training"] = policy.trainer.log
        out["accuracy"] = policy.trainer.accuracy
    return out


def monthly_accuracy(
    seed: int, args: argparse.Namespace, policy_name: str = "idle-avg"
) -> dict[str, Any]:
    """Figure 7 without a replay: retrain at every month boundary on the owner history up to it
    (as the replay would) and score each month's models on the month that follows."""
    from plugins.idle.policy import IdlePolicy  # scikit-learn: not at CLI start-up

    trace = generate_campus(load_campus_config(), args.days, args.scale, seed)
    cache = args.out / "model-cache" / f"seed{seed}-scale{args.scale}-days{args.days}"
    fits = cached_map(process_map(args.workers or 2, progress=False), cache)
    options = dict(parse_sets(args.set))
    policy = build_policy(policy_name, trace, options, seed=seed, parallel_map=fits)
    assert isinstance(policy, IdlePolicy)
    boundaries = [t for t in month_starts(trace.start, trace.end) if trace.start < t < trace.end]
    for t in terminal_bar(boundaries, desc=f"months seed {seed}", leave=False):
        load_history(policy, trace, t)
        policy.retrain(t)
    load_history(policy, trace, trace.end)
    trainer = policy.trainer
    if trainer.trained_until is not None:  # score the last month too
        trainer.score(trainer.layout, policy.models, trainer.trained_until, trace.end)
    return {"seed": seed, "accuracy": policy.trainer.accuracy, "training": policy.trainer.log}


def _serial(fn: Any, tasks: Any) -> list[Any]:
    return [fn(t) for t in tasks]


def run_policies(args: argparse.Namespace, policies: list[str]) -> list[dict[str, Any]]:
    """Every policy on every seed; per seed the first idle policy runs alone and fills the model
    cache using all workers, then the others replay side by side from the cache."""
    options = tuple(sorted(parse_sets(args.set).items()))
    cache = args.out / "model-cache"
    workers = args.workers or 2
    results: list[dict[str, Any]] = []
    for seed in args.seeds:
        runs = [Run(p, seed, args.days, args.scale, options, cache, 1) for p in policies]
        first = next((i for i, p in enumerate(policies) if p.startswith("idle-")), None)
        if first is not None:
            warm = runs.pop(first)
            results.append(run_one(replace(warm, fit_workers=workers)))
        results += run_parallel(run_one, runs, workers=workers, desc=f"replays seed {seed}")
    return results


def table_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table II rows, with energy and overhead as percentages of ``random`` on the same seed."""
    rows = []
    for r in results:
        s = r["summary"]
        rows.append(
            {
                "seed": r["seed"],
                "policy": s["policy"].split("/")[0],
                "overhead_min": s["overhead_min_mean"],
                "energy_mwh": s["energy_mwh"]["total"],
                "productive_mwh": s["energy_mwh"]["good"],
                "wasted_mwh": s["energy_mwh"]["wasted"],
                "evictions_owner": s["evictions"]["owner"],
                "evictions_reboot": s["evictions"]["reboot"],
            }
        )
    for row in rows:
        base = next((b for b in rows if b["seed"] == row["seed"] and b["policy"] == "random"), None)
        row["energy_pct_random"] = 100 * row["energy_mwh"] / base["energy_mwh"] if base else None
        row["overhead_pct_random"] = (
            100 * row["overhead_min"] / base["overhead_min"] if base else None
        )
    return rows


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["empty"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def training_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """When each retraining happened and how much history it had (the first months have little)."""
    seen = set()
    rows = []
    for r in results:
        for log in r.get("training", []):
            key = (r["seed"], log["until"])
            if key not in seen:
                seen.add(key)
                rows.append({"seed": r["seed"], **log})
    return rows
