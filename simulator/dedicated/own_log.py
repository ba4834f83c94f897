"""A site's own log for the power policies: an SWF file, or the jobs a live pool exported.

The cluster's shape comes from the SWF header (``MaxNodes``, and ``MaxProcs`` / ``MaxNodes``
cores per node) unless given; an exported ``jobs.csv`` takes it from ``machines.yaml`` beside
it. What the model cannot play is left out and said, with the first such record's line: jobs
without a run time, larger than the cluster, or (with a partition chosen) of other partitions.
Days without arrivals (gaps in the log) are no episodes; how many and the longest gap are said.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from simulator.dedicated.catalog import ClusterLog
from simulator.dedicated.days import DAY_S
from simulator.dedicated.workload import left_out
from simulator.traces import read_inventory, read_jobs, read_swf
from simulator.traces.errors import TraceError
from simulator.traces.swf import SwfLog


def log_name(path: str) -> str:
    """The label of a log's agents and table rows: its file name without suffixes."""
    name = Path(path).name
    for suffix in (".gz", ".swf", ".csv"):
        name = name.removesuffix(suffix)
    return name


def swf_cluster(
    path: str, nodes: int | None = None, cores_per_node: int | None = None,
    partition: int | None = None,
) -> tuple[ClusterLog, list[str]]:  # fmt: skip
    """The log with its cluster's shape (given, else from the header) and notes on what is
    left out; a shape neither given nor in the header is a located error naming the flag."""
    log = read_swf(path)
    nodes = nodes or log.max_nodes
    if not nodes or nodes < 1:
        raise TraceError(path, None, "MaxNodes", "a '; MaxNodes: N' header line, or --nodes N")
    if cores_per_node is None:
        procs = log.max_procs or nodes
        if procs % nodes:
            raise TraceError(
                path, None, "MaxProcs", f"a multiple of the {nodes} nodes, or --cores-per-node C",
                str(procs),
            )  # fmt: skip
        cores_per_node = procs // nodes
    if partition is not None and not (log.partition == partition).any():
        found = ", ".join(str(p) for p in np.unique(log.partition))
        raise TraceError(path, None, "partition", f"one of the log's partitions ({found})")
    cluster = ClusterLog(str(path), nodes, cores_per_node, log_name(path), partition)
    return cluster, _swf_notes(log, cluster)


def _swf_notes(log: SwfLog, cluster: ClusterLog) -> list[str]:
    notes = [f"{cluster.name}: {cluster.nodes} nodes x {cluster.cores_per_node} cores"]
    masks = left_out(log, cluster.nodes, cluster.cores_per_node, cluster.partition)
    for reason, mask in masks.items():
        if mask.any():
            first = int(log.line[int(np.argmax(mask))])
            notes.append(f"{log.path}:{first}: {int(mask.sum())} jobs {reason} left out")
    parts = np.unique(log.partition[log.partition >= 0])
    if cluster.partition is None and len(parts) > 1:
        listed = ", ".join(str(p) for p in parts)
        notes.append(f"partitions {listed} are played as one cluster; --partition P keeps one")
    kept = ~np.logical_or.reduce(list(masks.values()))
    notes += gap_notes(log.submit[kept] + log.int_header.get("TimeZone", 0))
    return notes


def gap_notes(submit: np.ndarray) -> list[str]:
    """How many days in the log's span have no arrival (they are no episodes), and the longest
    run of them."""
    if len(submit) == 0:
        return []
    days = np.unique(np.floor(submit / DAY_S).astype(np.int64))
    missing = int(days[-1] - days[0] + 1 - len(days))
    if not missing:
        return []
    longest = int((np.diff(days) - 1).max())
    return [f"{missing} days without arrivals are skipped (longest gap {longest} days)"]


def exported_cluster(
    jobs_csv: str, nodes: int | None = None, cores_per_node: int | None = None
) -> tuple[ClusterLog, list[str]]:
    """A live pool's ``trace export``: its jobs on a cluster of its machines (``machines.yaml``
    beside the jobs: their number, and the most common core count)."""
    jobs = read_jobs(jobs_csv)
    if nodes is None or cores_per_node is None:
        inventory = Path(jobs_csv).with_name("machines.yaml")
        if not inventory.is_file():
            raise FileNotFoundError(
                f"{inventory} not found: pass --nodes and --cores-per-node for {jobs_csv}"
            )
        machines = read_inventory(inventory).machines
        nodes = nodes or len(machines)
        cores_per_node = cores_per_node or Counter(m.cores for m in machines).most_common(1)[0][0]
    cluster = ClusterLog(str(jobs_csv), nodes, cores_per_node, log_name(jobs_csv))
    notes = [f"{cluster.name}: {nodes} nodes x {cores_per_node} cores"]
    never = ~np.isfinite(jobs.runtime) | (jobs.runtime <= 0)
    large = jobs.cpus > nodes * cores_per_node
    for count, reason in ((never.sum(), "that never completed"), (large.sum(), "too large")):
        if count:
            notes.append(f"{jobs_csv}: {int(count)} jobs {reason} left out")
    return cluster, notes + gap_notes(jobs.submit[~never & ~large])
