"""Real HTCondor output from ../shared/data/c_htcondor, read in place (never copied)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIXTURES = Path("c_htcondor/htcondor-repo-fixtures")
TESTS = FIXTURES / "src/condor_tests"
IAC_EXCERPT = Path(
    "c_htcondor/IAC-desktop-pool-2004-eviction-excerpt/std_universe_eviction_excerpt.txt"
)
LSST_RUNS = Path("c_htcondor/lsst-ctrl_bps_htcondor-testdata/tests_data.tar.gz")
"""DAGMan runs of a 2025 pool with partitionable slots; their ``*.nodes.log`` are event logs."""
STATUS_ADS = ("StatusAds/basic4slot", "StatusAds/partionable8core", "StatusAds/small1slot")
EVENT_LOGS = (
    "src/condor_utils/test_condor.log",
    "src/condor_tests/python_bindings/test_log.txt",
    "deleted_at_1b32649f/src/condor_tests/python_bindings/job.log",
    "deleted_at_1b32649f/src/condor_tests/python_bindings/test_event_reader.log",
)


def machine_ads(data: Path, name: str) -> list[Any]:
    """The ``condor_status -long`` ads of one fixture file, as classad2 ClassAds."""
    import classad2

    return list(classad2.parseAds((data / TESTS / name).read_text()))


def lsst_node_logs(data: Path, into: Path, kind: str = "nodes") -> dict[str, Path]:
    """The node event logs of the LSST runs (``kind`` "dagman": DAGMan's own), unpacked under
    ``into``, by run name."""
    import tarfile

    suffix = f".dag.{kind}.log"
    with tarfile.open(data / LSST_RUNS) as archive:
        members = [m for m in archive.getmembers() if m.name.endswith(suffix)]
        archive.extractall(into, members=members, filter="data")
    return {p.name.removesuffix(suffix): p for p in sorted(into.rglob(f"*{suffix}"))}
