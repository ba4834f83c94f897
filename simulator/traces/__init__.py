"""Trace file formats of the replay: inventory YAML, session/job CSV, SWF and FTA (see docs).

Every reader validates what it returns and raises ``TraceError`` naming file, line and field.
"""

from simulator.traces.csv_traces import (
    read_jobs,
    read_owner_sessions,
    write_jobs,
    write_owner_sessions,
)
from simulator.traces.errors import TraceError
from simulator.traces.fta import FtaTrace, fta_unavailability, read_fta, unrecorded
from simulator.traces.inventory_yaml import read_inventory, write_inventory
from simulator.traces.swf import SwfLog, read_swf, swf_jobs

__all__ = [
    "FtaTrace",
    "SwfLog",
    "TraceError",
    "fta_unavailability",
    "read_fta",
    "read_inventory",
    "read_jobs",
    "read_owner_sessions",
    "read_swf",
    "swf_jobs",
    "unrecorded",
    "write_inventory",
    "write_jobs",
    "write_owner_sessions",
]
