"""Command-line options shared by every command that replays a trace."""

from __future__ import annotations

import argparse
from pathlib import Path

from plugins.contract.policy import OptionError
from simulator.sources import SourceSpec


def add_source_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("trace (one machine source)")
    group.add_argument("--scenario", choices=["campus"], help="generate the built-in scenario")
    group.add_argument("--scenario-config", type=Path, help="YAML describing another campus")
    group.add_argument("--days", type=int, help="days to simulate (scenario default: 365)")
    group.add_argument("--scale", type=float, default=1.0, help="shrink machines, sessions, jobs")
    group.add_argument("--seed", type=int, default=1, help="scenario and tie-break seed")
    group.add_argument("--machines", type=Path, help="inventory YAML")
    group.add_argument("--owners", type=Path, help="owner sessions CSV")
    group.add_argument("--jobs", type=Path, help="HTC jobs CSV")
    group.add_argument("--swf", type=Path, help="SWF job log as the job source")
    group.add_argument("--fta", type=Path, help="FTA event_trace.tab as machines and downtime")
    group.add_argument("--fta-nodes", type=int, help="use only the first N FTA nodes")


def source_spec(args: argparse.Namespace) -> SourceSpec:
    return SourceSpec(
        scenario=args.scenario,
        scenario_config=args.scenario_config,
        days=args.days,
        scale=args.scale,
        seed=args.seed,
        machines=args.machines,
        owners=args.owners,
        jobs=args.jobs,
        swf=args.swf,
        fta=args.fta,
        fta_nodes=args.fta_nodes,
    )


def parse_sets(pairs: list[str] | None) -> dict[str, str]:
    """``--set key=value`` pairs as a dict (values are parsed by the policy's options)."""
    options: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise OptionError(f"--set {pair!r}: expected key=value, e.g. --set epsilon=0.1")
        options[key.strip()] = value.strip()
    return options
