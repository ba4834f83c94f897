"""``scenario campus``: write a generated campus as trace files, with plots of its seasonality."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from advisor.arg_types import count, output_directory, positive_number, whole_number
from advisor.commands.sources_args import check_input_files


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", choices=["campus"])
    parser.add_argument(
        "--scenario-config",
        "--config",
        type=Path,
        metavar="YAML",
        help="campus YAML (default: the bundled one); --config is its older name, still accepted",
    )
    parser.add_argument("--shape", help="a pool shape (simulator/campus/shapes.yaml)")
    parser.add_argument("--shapes-file", type=Path, help="YAML of your own pool shapes")
    parser.add_argument("--days", type=count, default=365)
    parser.add_argument("--scale", type=positive_number, default=1.0)
    parser.add_argument("--seed", type=whole_number, default=1)
    parser.add_argument("--out", type=output_directory, required=True)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from simulator.campus.plots import plot_scenario  # matplotlib: only when plotting
    from simulator.campus.scenario import generate_campus, load_campus_config
    from simulator.sources import SourceSpec, shaped
    from simulator.traces import write_inventory, write_jobs, write_owner_sessions

    check_input_files(args)
    spec = SourceSpec(shape=args.shape, shapes_file=args.shapes_file, seed=args.seed)
    config = shaped(load_campus_config(args.scenario_config), spec)
    trace = generate_campus(config, args.days, args.scale, args.seed)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    # written aside, then moved in together: a run stopped on the way (Ctrl-C) leaves no
    # machines.yaml of one run beside the owners.csv of another, which would replay as a pool
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".scenario-"))
    try:
        write_inventory(trace.inventory, staging / "machines.yaml")
        write_owner_sessions(trace.owners, trace.inventory, staging / "owners.csv")
        write_jobs(trace.jobs, staging / "jobs.csv")
        plots = [out / p.name for p in plot_scenario(trace, staging)]
        for written in staging.iterdir():
            written.replace(out / written.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(
        f"{len(trace.inventory.machines)} machines in {len(trace.inventory.clusters)} clusters, "
        f"{len(trace.owners)} owner sessions, {len(trace.jobs)} jobs over {args.days} days"
    )
    for path in [out / "machines.yaml", out / "owners.csv", out / "jobs.csv", *plots]:
        print(f"wrote {path}")
    return 0
