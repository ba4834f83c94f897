"""``replay``: run a trace under a policy, print its summary and write ``summary.json`` and
``jobs.csv`` where ``--out`` says."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from advisor.arg_types import hours_as_seconds, output_directory, whole_percent
from advisor.commands.sources_args import (
    add_reboot_hour,
    add_source_args,
    reboot_hour,
    source_spec,
)

if TYPE_CHECKING:
    from simulator.campus.replay import ReplayResult

log = logging.getLogger("htcondor_advisor.replay")


def register(parser: argparse.ArgumentParser) -> None:
    add_source_args(parser)
    add_pool_args(parser)
    parser.add_argument(
        "--out",
        type=output_directory,
        help="directory for summary.json and jobs.csv (default: only the table is printed)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(handler=run)


def add_pool_args(parser: argparse.ArgumentParser) -> None:
    """The policy and the pool's rules of a replay (``run_replay`` reads them all), shared with
    ``bench replay`` so that it measures the replay a user runs."""
    parser.add_argument("--policy", default="random", help="a policy serving the campus model")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="policy option")
    parser.add_argument(
        "--wait-bound",
        type=hours_as_seconds,
        metavar="HOURS",
        help="a job idle this long in one wait is matched as without advice for the rest of it "
        "(ADVISOR_WAIT_BOUND, shipped: 24; 0 or none: no bound, the default here, as in the "
        "papers)",
    )
    parser.add_argument(
        "--control-percent",
        type=whole_percent,
        metavar="PERCENT",
        help="jobs (by a hash of their id) matched as without advice, as the shipped "
        "ADVISOR_CONTROL_PERCENT does live; per-arm figures for htcondor-advisor report "
        "(0, the default: none)",
    )
    add_reboot_hour(parser, "a what-if for the pool's pool.reboot_hour")
    parser.add_argument(
        "--no-job-edits",
        action="store_true",
        help="as a pool where the daemon does not edit jobs (pool.edit_jobs false, the default): "
        "no per-job advice, and a job's class is its last attempt's hours, not its longest",
    )


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[float], None] | None]:
    """A percent bar on stderr that appears only when the replay takes more than 2 s, and
    only on a terminal (``advisor.lab.progress``)."""
    from advisor.lab.progress import on_terminal, terminal_bar

    if not on_terminal(enabled):
        yield None
        return
    with terminal_bar(total=100, unit="%", delay=2.0, desc="replay", leave=False) as bar:

        def update(fraction: float) -> None:
            bar.update(round(fraction * 100) - bar.n)

        yield update


def run_replay(args: argparse.Namespace) -> ReplayResult:
    from advisor.agent_files import with_agent
    from advisor.lab.training_map import process_map
    from plugins.contract.option_pairs import parse_sets
    from plugins.contract.registry import policy_for
    from simulator.campus.replay import build_policy, replay
    from simulator.campus.rules import PoolRules
    from simulator.sources import assemble

    policy_for(args.policy, "campus")  # before the trace: a wrong name fails at once
    trace, notes = assemble(source_spec(args))
    for note in notes:
        log.info(note)
    hour, said = reboot_hour(args)
    if said:  # a site's own pool
        log.info(said)
    policy = build_policy(
        args.policy,
        trace,
        with_agent(args.policy, parse_sets(args.set)),  # an agent file is read here
        seed=args.seed,
        parallel_map=process_map(progress=not args.no_progress),
        reboot_hour=hour,
    )
    with progress_bar(not args.no_progress) as update:
        rules = PoolRules(
            reboot_hour=hour,
            wait_bound_s=args.wait_bound,
            control_percent=args.control_percent,
            job_edits=not args.no_job_edits,
        )
        return replay(trace, policy, seed=args.seed, rules=rules, on_progress=update)


def run(args: argparse.Namespace) -> int:
    from simulator.campus.summary import format_table, summarize, write_outputs

    result = run_replay(args)
    summary = summarize(result)
    if args.out is not None:
        write_outputs(result, summary, args.out)
    print(format_table(summary))
    jobs = summary["jobs"]
    if jobs["completed"] == 0 and jobs["unfinished_at_end"] > 0 and jobs["attempts"] == 0:
        print(  # (none ever started: a site's policy that keeps every job off, often)
            f"note: no job completed, {jobs['unfinished_at_end']} still waiting; advice that "
            "keeps jobs off (a negative or NaN rank, a hold on every machine) does this "
            "(docs/writing-a-policy.md, section 4)",
            file=sys.stderr,
        )
    if args.out is None:
        print("(add --out DIR to keep summary.json and jobs.csv)", file=sys.stderr)
    else:
        print(f"wrote {args.out / 'summary.json'} and {args.out / 'jobs.csv'}")
    return 0
