"""The dedicated-cluster logs this project evaluates on (``../shared/data/b_workloads``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from simulator.dedicated.days import Day, split_days, train_test_split
from simulator.dedicated.workload import Workload, read_workload


@dataclass(frozen=True)
class ClusterLog:
    path: str
    nodes: int
    cores_per_node: int


CATALOG = {
    "nasa": ClusterLog("b_workloads/NASA-iPSC-1993-3.1-cln/NASA-iPSC-1993-3.1-cln.swf.gz", 128, 1),
    "hpc2n": ClusterLog("b_workloads/HPC2N-subset_alea/hpc2n-subset.swf.gz", 120, 2),
}


def default_data_dir() -> str:
    return os.environ.get("ADVISOR_DATA_DIR", "../shared/data")


def log_path(name: str, data_dir: str) -> Path:
    """The log's file; a missing one raises FileNotFoundError naming --data-dir."""
    if name not in CATALOG:
        known = ", ".join(sorted(CATALOG))
        raise FileNotFoundError(f"unknown workload {name!r}: use one of {known}")
    path = Path(data_dir) / CATALOG[name].path
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: pass --data-dir or set ADVISOR_DATA_DIR")
    return path


@lru_cache(maxsize=4)
def load_days(name: str, data_dir: str, seed: int = 0) -> tuple[list[Day], list[Day]]:
    """Train and test days of a catalogued log (cached per process: workers reuse it)."""
    log = CATALOG.get(name)
    path = log_path(name, data_dir)
    assert log is not None
    workload: Workload = read_workload(path, log.nodes, log.cores_per_node)
    return train_test_split(split_days(workload), seed=seed)
