"""Command-line options shared by every command that replays a trace."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.arg_types import count, hour_or_none, positive_number, unreadable, whole_number

if TYPE_CHECKING:
    from simulator.sources import SourceSpec

SLOT_LAYOUTS = ("single", "partitionable")
"""``simulator.trace_model.SLOT_LAYOUTS``, written out: ``--help`` stays free of numpy."""
INPUT_FILES = ("scenario_config", "shapes_file", "machines", "owners", "jobs", "swf", "fta")
"""The options that name a file to read, by their ``args`` attribute."""


def add_source_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("trace (one machine source)")
    group.add_argument("--scenario", choices=["campus"], help="generate the built-in scenario")
    group.add_argument("--scenario-config", type=Path, help="YAML describing another campus")
    group.add_argument(
        "--shape",
        help="a pool shape of the campus (simulator/campus/shapes.yaml; the seed draws a member)",
    )
    group.add_argument("--shapes-file", type=Path, help="YAML of your own pool shapes")
    group.add_argument("--days", type=count, help="days to simulate (scenario default: 365)")
    group.add_argument(
        "--scale", type=positive_number, help="shrink the campus's machines, sessions, jobs (1)"
    )
    group.add_argument("--seed", type=whole_number, default=1, help="scenario and tie-break seed")
    group.add_argument("--machines", type=Path, help="inventory YAML")
    group.add_argument("--owners", type=Path, help="owner sessions CSV")
    group.add_argument("--jobs", type=Path, help="HTC jobs CSV")
    group.add_argument("--swf", type=Path, help="SWF job log as the job source")
    group.add_argument("--fta", type=Path, help="FTA event_trace.tab as machines and downtime")
    group.add_argument("--fta-nodes", type=count, help="use only the first N FTA nodes")
    group.add_argument(
        "--slots",
        choices=SLOT_LAYOUTS,
        help="every machine takes jobs this way (default: as the source says; campus: single)",
    )


def add_reboot_hour(parser: argparse.ArgumentParser, what: str) -> None:
    """``--reboot-hour``, the nightly reboot a replay or a training assumes."""
    parser.add_argument(
        "--reboot-hour",
        type=hour_or_none,
        default=argparse.SUPPRESS,  # (the campus's, read when the simulator is loaded)
        metavar="HOUR",
        help="the hour (UTC) the machines reboot each night unless an owner is logged in, or "
        f"none; {what} (default: 3, the papers' campus)",
    )


def reboot_hour(args: argparse.Namespace) -> tuple[float | None, str | None]:
    """The hour ``--reboot-hour`` gives, and what to say where a site's own machines are
    assumed to reboot as the papers' campus did."""
    from simulator.campus.rules import CAMPUS_REBOOT_HOUR

    if hasattr(args, "reboot_hour"):
        return args.reboot_hour, None
    if not (getattr(args, "machines", None) or getattr(args, "fta", None)):
        return CAMPUS_REBOOT_HOUR, None
    said = (
        f"the machines reboot at {int(CAMPUS_REBOOT_HOUR):02d}:00 UTC each night unless an owner"
        " is logged in (the papers' campus); --reboot-hour none, or your pool's hour, if yours"
        " do not"
    )
    return CAMPUS_REBOOT_HOUR, said


def source_spec(args: argparse.Namespace) -> SourceSpec:
    """The sources named on the command line, every input file checked readable."""
    from simulator.sources import SourceSpec

    check_input_files(args)
    check_combination(args)
    return SourceSpec(
        scenario=args.scenario,
        scenario_config=args.scenario_config,
        shape=args.shape,
        shapes_file=args.shapes_file,
        days=args.days,
        scale=1.0 if args.scale is None else args.scale,
        seed=args.seed,
        machines=args.machines,
        owners=args.owners,
        jobs=args.jobs,
        swf=args.swf,
        fta=args.fta,
        fta_nodes=args.fta_nodes,
        slots=args.slots,
    )


def check_input_files(args: argparse.Namespace) -> None:
    """Open every input file named before any work: a reader deep inside would only raise an
    ``OSError`` naming the path, not the option, and maybe after minutes of generation."""
    from simulator.sources import SourceError

    for name in INPUT_FILES:
        path = getattr(args, name, None)
        if path is None:
            continue
        problem = unreadable(path)
        if problem:
            raise SourceError(f"--{name.replace('_', '-')}: {problem}")


NEEDS = (  # (option, the options it is read with, what to do): an option the sources ignore
    ("scenario_config", ("scenario",), "add --scenario campus or drop it"),
    ("shape", ("scenario",), "add --scenario campus or drop it"),
    ("shapes_file", ("shape",), "add --shape NAME (a shape of the file) or drop it"),
    ("scale", ("scenario",), "a trace file replays as it is; drop --scale"),
    ("owners", ("machines",), "it goes with --machines F; drop it"),
    ("fta_nodes", ("fta",), "it goes with --fta F; drop it"),
)


def check_combination(args: argparse.Namespace) -> None:
    """Refuse an option the named sources would silently ignore: a replay that ran without it
    would look like an answer to the question the user asked."""
    from simulator.sources import SourceError

    def given(name: str) -> bool:
        return getattr(args, name, None) is not None

    for name, partners, advice in NEEDS:
        if given(name) and not any(given(p) for p in partners):
            with_ = " or ".join(f"--{p.replace('_', '-')}" for p in partners)
            raise SourceError(f"--{name.replace('_', '-')} is read only with {with_}: {advice}")
    if given("jobs") and given("swf"):
        raise SourceError("--jobs and --swf both name the jobs: keep one")
