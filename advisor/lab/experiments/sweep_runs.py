"""What the bandit and replica experiments share: one replay per task in a worker process, its
figures as a CSV row, and the campus options every experiment takes. Not an experiment itself."""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from advisor.agent_files import with_agent
from advisor.arg_types import count, output_directory, positive_number, whole_number
from advisor.lab.experiments.day_bootstrap import by_day
from advisor.lab.sweep.executors import add_executor_arguments, run_all
from plugins.replicas.qos import QosBound
from simulator.campus.job_book import DONE
from simulator.campus.replay import ReplayResult, build_policy, replay
from simulator.campus.rules import PoolRules
from simulator.campus.scenario import generate_campus, load_campus_config
from simulator.campus.shapes import load_shapes, shape_member
from simulator.campus.summary import summarize
from simulator.plotting import save
from simulator.sources import jobs_in_period, runnable, thinned
from simulator.trace_model import SINGLE, Jobs, Trace

if TYPE_CHECKING:
    from matplotlib.figure import Figure


NOT_IN_CSV = ("months", "overhead_days", "energy_days")
"""A run's figures that are series, for plots and intervals, not a table's cells."""


@dataclass(frozen=True)
class Task:
    """One replay: the campus (scale, days, seed, replicable fraction) and the policy."""

    policy: str
    options: tuple[tuple[str, str], ...] = ()
    scale: float = 1.0
    days: int | None = None
    seed: int = 1
    replicable: float = 0.0
    labels: tuple[tuple[str, Any], ...] = field(default=())
    slots: str = SINGLE
    """How every machine takes jobs (docs/slots.md)."""
    shape: str = "campus"
    """The pool shape (``simulator/campus/shapes.yaml``) whose member ``seed`` draws."""
    shape_spec: str = ""
    """The shape's ranges as JSON when they come from the user's ``--shapes-file`` (they travel
    with the task to an execute point); empty: the packaged shape of that name."""
    wait_bound_s: float | None = None
    """The starvation bound (``--wait-bound``; None: none, as the papers ran)."""
    job_edits: bool = True
    """The daemon edits jobs (``PoolRules.job_edits``, ``pool.edit_jobs`` live)."""
    jobs: Jobs | None = field(default=None, repr=False, compare=False)
    """The user's own jobs (``--jobs``) in place of the member's generated ones; they travel in
    the task to an execute point, and ``jobs_digest`` stands for them in the task's id."""
    jobs_digest: str = ""


def add_campus_arguments(parser: argparse.ArgumentParser, scale: float, days: int | None) -> None:
    parser.add_argument("--scenario", choices=["campus"], default="campus")
    parser.add_argument("--scale", type=positive_number, default=scale, help="shrink the campus")
    parser.add_argument("--days", type=count, default=days, help="days to replay (default: a year)")
    parser.add_argument("--seed", type=whole_number, default=1)
    parser.add_argument(
        "--workers", type=count, default=None, help="parallel replays (default: cores)"
    )
    parser.add_argument(
        "--out", type=output_directory, required=True, help="directory for the CSV and PNGs"
    )
    add_executor_arguments(parser)


@lru_cache(maxsize=2)
def campus(
    scale: float,
    days: int | None,
    seed: int,
    replicable: float,
    slots: str = SINGLE,
    shape: str = "campus",
    shape_spec: str = "",
) -> Trace:
    spec = json.loads(shape_spec) if shape_spec else load_shapes()[shape]
    config = shape_member(load_campus_config(None), spec, seed)
    if replicable:
        config = replace(config, jobs=replace(config.jobs, replicable_fraction=replicable))
    trace = generate_campus(config, days=days or 365, scale=scale, seed=seed)
    if slots != SINGLE:
        machines = trace.inventory.machines
        trace.inventory.machines = [replace(m, slots=slots) for m in machines]
    return trace


def run_task(task: Task) -> dict[str, Any]:
    """Replay one task; its labels plus the summary's figures (and the monthly energy)."""
    trace = campus(
        task.scale, task.days, task.seed, task.replicable, task.slots, task.shape, task.shape_spec
    )
    if task.jobs is not None:  # a new Trace: the cached member stays as generated
        trace = replace(trace, jobs=jobs_in_period(trace, thinned(task.jobs, task.scale)[0])[0])
        trace.jobs = runnable(trace)[0]  # as replay leaves them out; jobs_submitted counts the rest
    options = with_agent(task.policy, dict(task.options))  # agent=nasa: the file's contents
    policy = build_policy(task.policy, trace, options, seed=task.seed)
    rules = PoolRules(wait_bound_s=task.wait_bound_s, job_edits=task.job_edits)
    result = replay(trace, policy, seed=task.seed, rules=rules)
    s = summarize(result)
    e = s["energy_mwh"]
    submit, overhead = completed_overheads(result)
    row: dict[str, Any] = dict(task.labels)
    row.update(
        policy=task.policy,
        options=" ".join(f"{k}={v}" for k, v in task.options),
        scale=task.scale,
        days=s["period"]["days"],
        seed=task.seed,
        overhead_min=s["overhead_min_mean"],
        good_mwh=e["good"],
        wasted_mwh=e["wasted"],
        total_mwh=e["total"],
        slots=task.slots,
        shape=task.shape,
        job_edits=task.job_edits,
        cores_busy_share=s["cores"]["busy_share"],
        evictions=sum(s["evictions"].values()),
        jobs_submitted=s["jobs"]["submitted"],
        jobs_completed=s["jobs"]["completed"],
        months=[m["energy_mwh_total"] for m in s["months"]],
        **qos_failures(result),
        **overhead_tail(overhead),
        overhead_days=(
            by_day(submit, overhead / 60.0, trace.start),
            by_day(submit, np.ones(len(submit)), trace.start),
        ),
        energy_days=by_day(
            np.asarray(result.book.submit_t),
            np.asarray(result.book.good_wh) + np.asarray(result.book.wasted_wh),
            trace.start,
        ),
    )
    return row


def completed_overheads(result: ReplayResult) -> tuple[np.ndarray, np.ndarray]:
    """The completed jobs' submission times and overheads (s)."""
    book = result.book
    done = np.asarray(book.status) == DONE
    submit = np.asarray(book.submit_t)[done]
    return submit, np.asarray(book.finish)[done] - submit - np.asarray(book.runtime)[done]


def overhead_tail(overhead: np.ndarray) -> dict[str, float]:
    """The waits the mean hides: the 99th percentile and the longest, in minutes."""
    if not overhead.size:
        return {"overhead_p99_min": 0.0, "overhead_max_min": 0.0}
    return {
        "overhead_p99_min": float(np.percentile(overhead, 99)) / 60.0,
        "overhead_max_min": float(overhead.max()) / 60.0,
    }


def qos_failures(result: ReplayResult) -> dict[str, int]:
    """Completed jobs outside each QoS bound of paper 003 sec. 4.1 (turnaround vs runtime)."""
    book = result.book
    done = np.asarray(book.status) == DONE
    submit = np.asarray(book.submit_t)[done]
    finish = np.asarray(book.finish)[done]
    runtime = np.asarray(book.runtime)[done]
    out = {}
    for bound in (QosBound(), QosBound("overhead", 50.0), QosBound("overhead", 100.0)):
        late = finish > bound.deadline(submit, runtime)
        out[f"qos_fail_{bound}".replace(":", "_")] = int(late.sum())
    return out


def run_tasks(tasks: Sequence[Task], args: argparse.Namespace, desc: str) -> list[dict[str, Any]]:
    return run_all(run_task, tasks, args, desc)


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = [k for k in rows[0] if k not in NOT_IN_CSV]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path}")


def baseline(rows: Sequence[dict[str, Any]], policy: str = "random") -> dict[str, Any]:
    return next(r for r in rows if r["policy"] == policy and not r["options"])


def scale_note(args: argparse.Namespace) -> str:
    return f"campus seed {args.seed}, scale {args.scale}, {args.days or 365} days"


def save_plot(fig: Figure, path: Path) -> None:
    """Save a figure and say so, as ``write_csv`` does for tables."""
    print(f"wrote {save(fig, path)}")
