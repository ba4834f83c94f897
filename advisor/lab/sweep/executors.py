"""``--executor local|condor`` for the experiments whose tasks are independent replays: where
those run (local processes, or HTCondor jobs on the pool) and the options of each."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from advisor.lab.sweep.local_run import run_locally

T = TypeVar("T")
R = TypeVar("R")


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    pool = parser.add_argument_group("on the HTCondor pool (--executor condor, docs/sweeps.md)")
    pool.add_argument(
        "--executor",
        choices=["local", "condor"],
        default="local",
        help="local processes (default) or one HTCondor job per replay; either resumes from "
        "the results in OUT/sweep",
    )
    pool.add_argument("--schedd", help="schedd name (default: this host's)")
    pool.add_argument("--request-cpus", type=int, default=1, metavar="N")
    pool.add_argument("--request-memory", type=int, default=2048, metavar="MB")
    pool.add_argument(
        "--python",
        default=sys.executable,
        help="the Python of the shared installation on the execute points (default: this one)",
    )
    pool.add_argument(
        "--max-idle", type=int, default=100, metavar="N", help="jobs in the queue at once"
    )


def run_all(
    fn: Callable[[T], R], tasks: Sequence[T], args: argparse.Namespace, desc: str
) -> list[R]:
    """``[fn(t) for t in tasks]`` where ``args.executor`` says, results in task order."""
    if args.executor == "condor":
        from advisor.lab.sweep.pool_run import PoolOptions, run_on_pool

        options = PoolOptions(
            args.schedd, args.request_cpus, args.request_memory, args.python, args.max_idle
        )
        results: list[Any] = run_on_pool(fn, tasks, Path(args.out) / "sweep", options, desc)
        return results
    return run_locally(fn, tasks, Path(args.out) / "sweep", args.workers, desc)
