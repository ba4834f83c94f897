"""``trace``: trace files ``replay`` reads, from what a pool did.

``export`` reads the condor source's journal in ``--state DIR`` and writes ``machines.yaml``
(inventory), ``owners.csv`` (owner sessions) and ``jobs.csv`` (submissions with the run time of
the attempt that completed), so an administrator can replay their own pool under other policies:
``htcondor-advisor replay --machines machines.yaml --owners owners.csv --jobs jobs.csv``.

``history`` reads ``condor_history`` output and writes ``jobs.csv``, the pool's own job mix to
replay on a campus shape before the advisor has watched the pool:
``htcondor-advisor replay --scenario campus --shape S --jobs jobs.csv``.
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
    export.set_defaults(handler=run_export)
    history = verbs.add_parser(
        "history",
        help="write jobs.csv from condor_history output",
        description="jobs.csv from condor_history -json, -jsonl, -xml, -long, the schedd's"
        " history file, or an -af:h table (docs/trace-formats.md)",
    )
    history.add_argument("files", type=Path, nargs="+", metavar="FILE", help="history output")
    history.add_argument(
        "--out", type=output_directory, required=True, help="directory for jobs.csv"
    )
    history.set_defaults(handler=run_history)


def run_export(args: argparse.Namespace) -> int:
    from advisor.lab.journal_trace import export_trace

    machines, sessions, jobs, still_open = export_trace(args.state, args.out)
    print(f"wrote {machines} machines, {sessions} owner sessions and {jobs} jobs to {args.out}")
    if still_open:
        print(
            f"left out: {still_open} jobs still queued or running at the journal's end "
            "(their run time is not known yet)"
        )
    return 0


def run_history(args: argparse.Namespace) -> int:
    from advisor.lab.history_ads import read_history_ads
    from advisor.lab.history_trace import READ, history_jobs
    from advisor.lab.progress import terminal_bar
    from simulator.traces import write_jobs

    histories = [
        (path, terminal_bar(read_history_ads(path, READ), desc=path.name, unit=" ads"))
        for path in history_files(args.files)
    ]
    found = history_jobs(histories)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jobs(found.jobs, args.out / "jobs.csv")
    print(
        f"read {found.ads} job ads; wrote {len(found.jobs)} jobs to {args.out / 'jobs.csv'}"
        f" ({found.completed} completed, {found.removed} removed)"
    )
    if found.estimated:
        print(
            f"{found.estimated} run times are RemoteWallClockTime, every attempt's: add"
            " CommittedTime or JobCurrentStartDate to the history for the completing attempt's"
        )
    for why, n in sorted(found.left_out.items()):
        print(f"left out: {n} jobs: {why}")
    return 0


def history_files(files: list[Path]) -> list[Path]:
    """``files``, each a file given once. A history without job ids (``ClusterId`` or
    ``GlobalJobId``) cannot tell a job listed twice from two alike, so the same file named
    twice would count every job twice: a mistake, refused whatever the form."""
    from simulator.traces.errors import TraceError

    seen: dict[tuple[int, int], Path] = {}
    for path in files:
        if path.is_dir():
            expected = "a file of condor_history output, not a directory: name the files in it"
            raise TraceError(path, None, None, expected)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (condor_history output to read)")
        stat = path.stat()
        first = seen.setdefault((stat.st_dev, stat.st_ino), path)
        if first is not path:
            expected = f"each history file named once (it is also {first})"
            raise TraceError(path, None, None, expected)
    return list(files)
