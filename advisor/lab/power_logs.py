"""The logs ``train-power`` and ``experiment power-table`` play, from their common arguments:
catalogued names, or one site's own SWF file (``--swf``) or exported jobs (``--jobs``) with the
cluster's shape; what is left out of a log is printed before any work starts."""

from __future__ import annotations

import argparse

from plugins.contract.config_checks import ConfigError
from simulator.dedicated.catalog import CATALOG, ClusterLog, catalogued, default_data_dir
from simulator.dedicated.own_log import exported_cluster, swf_cluster


def add_log_arguments(parser: argparse.ArgumentParser, many: bool = False) -> None:
    """Which log: catalogued names, or a site's own SWF file or exported jobs with its shape."""
    if many:
        parser.add_argument("--workloads", nargs="*", default=None, choices=sorted(CATALOG))
    else:
        parser.add_argument("workload", nargs="?", choices=sorted(CATALOG))
    parser.add_argument("--data-dir", default=default_data_dir())
    parser.add_argument("--swf", help="your own SWF log (.swf or .swf.gz) instead of a name")
    parser.add_argument(
        "--jobs", help="jobs.csv of `trace export` (machines.yaml beside it gives the shape)"
    )
    parser.add_argument("--nodes", type=int, help="cluster nodes (default: SWF MaxNodes)")
    parser.add_argument(
        "--cores-per-node", type=int, help="cores per node (default: SWF MaxProcs / MaxNodes)"
    )
    parser.add_argument("--partition", type=int, help="play only this SWF partition's jobs")


def chosen_logs(args: argparse.Namespace) -> list[ClusterLog]:
    """The logs named by ``args``; a shape flag without a file of its own is refused, since the
    catalogued logs keep the shapes of the papers' machines."""
    one = getattr(args, "workload", None)  # train-power: one name; power-table: --workloads
    names = [one] if one else list(getattr(args, "workloads", None) or [])
    own = [flag for flag in ("swf", "jobs") if getattr(args, flag)]
    flags = {"nodes": "--nodes", "cores_per_node": "--cores-per-node", "partition": "--partition"}
    given = [flag for key, flag in flags.items() if getattr(args, key) is not None]
    if len(own) > 1:
        raise ConfigError("give either --swf FILE or --jobs FILE, not both")
    if given and not own:
        raise ConfigError(f"{', '.join(given)} describe your own log: add --swf FILE or --jobs")
    for value, flag in ((args.nodes, "--nodes"), (args.cores_per_node, "--cores-per-node")):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} {value}: must be a positive number (e.g. 128)")
    logs = [catalogued(name, args.data_dir) for name in names]
    if args.swf:
        log, notes = swf_cluster(args.swf, args.nodes, args.cores_per_node, args.partition)
    elif args.jobs:
        if args.partition is not None:
            raise ConfigError("--partition is for SWF logs; exported jobs have none")
        log, notes = exported_cluster(args.jobs, args.nodes, args.cores_per_node)
    else:
        if not logs:
            raise ConfigError("name a catalogued log (nasa, hpc2n), or give --swf FILE or --jobs")
        return logs
    for note in notes:
        print(note)
    return [*logs, log]
