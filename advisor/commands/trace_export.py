"""``trace export``: what a live advisor observed, as trace files ``replay`` reads.

Reads the condor source's journal in ``--state DIR`` and writes ``machines.yaml`` (inventory),
``owners.csv`` (owner sessions) and ``jobs.csv`` (submissions with the run time of the attempt that
completed) into ``--out DIR``, so an administrator can replay their own pool under other policies:
``htcondor-advisor replay --machines machines.yaml --owners owners.csv --jobs jobs.csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from advisor.arg_types import output_directory


def register(parser: argparse.ArgumentParser) -> None:
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    export = verbs.add_parser("export", help="write machines.yaml, owners.csv and jobs.csv")
    export.add_argument("--state", type=Path, required=True, help="the daemon's state directory")
    export.add_argument(
        "--out", type=output_directory, required=True, help="directory for the trace files"
    )
    export.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from advisor.lab.journal_trace import export_trace

    machines, sessions, jobs = export_trace(args.state, args.out)
    print(f"wrote {machines} machines, {sessions} owner sessions and {jobs} jobs to {args.out}")
    return 0
