"""Which dedicated-cluster log to play: a catalogued one (``../shared/data/b_workloads``) or a
site's own SWF file, with the cluster's shape; and its days, split into training and test."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from simulator.dedicated.days import Day, split_days, train_test_split
from simulator.dedicated.workload import jobs_workload, read_workload
from simulator.traces.csv_traces import read_jobs


@dataclass(frozen=True)
class ClusterLog:
    """A log and the cluster it ran on; ``name`` labels agents and tables (picklable and
    hashable, so worker processes reload the same days from it)."""

    path: str
    nodes: int
    cores_per_node: int
    name: str = ""
    partition: int | None = None
    """Only this SWF partition's jobs (None: all, on one cluster)."""


CATALOG = {
    "nasa": ClusterLog("b_workloads/NASA-iPSC-1993-3.1-cln/NASA-iPSC-1993-3.1-cln.swf.gz", 128, 1),
    "hpc2n": ClusterLog("b_workloads/HPC2N-subset_alea/hpc2n-subset.swf.gz", 120, 2),
}
"""Shapes of the machines, not of the headers: HPC2N's header counts its 240 processors as
nodes, the machine had 120 dual-processor nodes (paper 001, section 5.1)."""


def default_data_dir() -> str:
    return os.environ.get("ADVISOR_DATA_DIR", "../shared/data")


def log_path(name: str, data_dir: str) -> Path:
    """The log's file; a missing one raises FileNotFoundError naming --data-dir."""
    if name not in CATALOG:
        known = ", ".join(sorted(CATALOG))
        raise FileNotFoundError(f"unknown workload {name!r}: use one of {known} or --swf FILE")
    path = Path(data_dir) / CATALOG[name].path
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: pass --data-dir or set ADVISOR_DATA_DIR")
    return path


def catalogued(name: str, data_dir: str) -> ClusterLog:
    """A catalogued log with its file found under ``data_dir``."""
    return replace(CATALOG[name], path=str(log_path(name, data_dir)), name=name)


@lru_cache(maxsize=4)
def load_days(log: ClusterLog, seed: int = 0) -> tuple[list[Day], list[Day]]:
    """Train and test days of a log (cached per process: workers reuse it)."""
    if log.path.endswith(".csv"):  # a live pool's exported jobs (``trace export``)
        workload = jobs_workload(read_jobs(log.path), log.path, log.nodes, log.cores_per_node)
    else:
        workload = read_workload(log.path, log.nodes, log.cores_per_node, log.partition)
    return train_test_split(split_days(workload), seed=seed)
