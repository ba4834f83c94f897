"""``build_condor_pool(config)``: the source and sinks of pool kind ``condor``.

Settings (``pool`` section of the daemon's configuration; defaults in brackets):
``collector`` HOST:PORT (or the daemon's checked ``(host, port)``); ``schedds`` schedd names
to read ([] = every schedd the collector shows, asked at each poll); ``token_file`` IDTOKEN for
the advisor's identity [none: READ only, no merge]; ``merge`` publish through MERGE_STARTD_AD
(needs the token) [true]; ``event_log`` a job event log to follow as well [none], written by the
schedd ``event_log_schedd`` [the pool's only schedd]; ``active_idle_s`` keyboard idle below
which the owner counts as present [900]; ``collector_settles_s`` how long a collector just
started is taken to miss ads [600]; ``watts`` {active, idle, sleep} for machines without an
``AdvisorMachineType`` [Normal: 57/40/2]; ``types`` watts per ``AdvisorMachineType``. The daemon
adds (``advisor.commands.run.live_pool_settings``): ``state_dir`` where the journal for ``trace
export`` goes [none: no journal]; ``advice_lifetime_s`` [3600]; ``policy`` label for
``AdvisorPolicy`` ["unknown"]. Every call to the collector and the schedds runs in a child
process and waits at most ``call_timeout_s`` [30] (``advisor.condor.bounded_calls``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.condor.bounded_calls import BoundedCalls, RemoteCollector, RemoteSchedd
from advisor.condor.event_log import EventLogAttempts, EventLogFollower
from advisor.condor.job_sink import ScheddJobSink
from advisor.condor.journal import Journal
from advisor.condor.machine_tracker import MachineTracker
from advisor.condor.merge_sink import MergeStartdSink
from advisor.condor.retry import Backoff
from advisor.condor.schedd_directory import ScheddDirectory
from advisor.condor.schedd_reader import ScheddReader
from advisor.condor.source import COLLECTOR_SETTLES_S, CondorPoolSource, Inventory
from advisor.condor.startd_ads import STARTD_PROJECTION, SlotAd
from advisor.ports import AdviceSink, PoolSource
from plugins.contract.config_checks import ConfigError
from plugins.contract.policy import MachineInfo

NORMAL_WATTS = {"active": 57.0, "idle": 40.0, "sleep": 2.0}
"""docs/architecture.md section 4, type Normal."""


def machine_inventory(
    watts: Mapping[str, float], types: Mapping[str, Mapping[str, float]]
) -> Inventory:
    """MachineInfo from a machine's slots: ``AdvisorCluster``/``AdvisorMachineType`` if set."""

    def build(name: str, slots: Sequence[SlotAd]) -> MachineInfo:
        mtype = next((s.mtype for s in slots if s.mtype), None) or "default"
        cluster = next((s.cluster for s in slots if s.cluster), None) or "pool"
        w = types.get(mtype, watts)
        jobs_at_once = max(1, sum(s.jobs_at_once for s in slots))
        return MachineInfo(name, cluster, mtype, w["active"], w["idle"], w["sleep"], jobs_at_once)

    return build


def collector_address(value: str | tuple[str, int]) -> str:
    """``HOST:PORT`` from a string or a ``(host, port)`` pair (IPv6 hosts in brackets)."""
    if isinstance(value, str):
        return value
    host, port = value
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def read_token(path: Path) -> str:
    """The IDTOKEN's text. A token gone or changed since the start's checks (or never checked)
    is one line naming ``pool.token_file``, never a bare ``[Errno 2]``."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(
            f"pool.token_file: cannot read {str(path)!r} ({why}); give the path of the token "
            "file deploy/TOKENS.md creates, or null for a pool without token"
        ) from None


def control_mismatch(pool_value: str | None, percent: int) -> str | None:
    """Why the pool's ``ADVISOR_CONTROL_PERCENT`` (this host's HTCondor configuration, the
    central manager's, which has deploy/common/40) and ``control.percent`` disagree, or None:
    the daemon would count the jobs the expressions leave without advice in the wrong arm."""
    if pool_value is None:
        return None if percent == 0 else "ADVISOR_CONTROL_PERCENT is not set in HTCondor"
    try:
        pool = int(pool_value.strip())
    except ValueError:
        return f"ADVISOR_CONTROL_PERCENT is {pool_value!r}, not a whole number"
    return None if pool == percent else f"ADVISOR_CONTROL_PERCENT is {pool} in HTCondor"


def unbounded_wait(pool_value: str | None) -> str | None:
    """Why the pool's ``ADVISOR_WAIT_BOUND`` (deploy/common/40 ships a day) sets no starvation
    bound, or None: then advice may keep a job waiting as long as it advises so. The value is
    evaluated as the expressions do (``24 * 3600`` is a day)."""
    import classad2

    if pool_value is None:
        return "ADVISOR_WAIT_BOUND is not set in HTCondor"
    try:
        seconds = classad2.ExprTree(pool_value).eval()
    except (classad2.ClassAdException, ValueError):
        seconds = None
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return f"ADVISOR_WAIT_BOUND is {pool_value.strip()!r}, not a number of seconds"
    return None if seconds > 0 else f"ADVISOR_WAIT_BOUND is {pool_value.strip()} in HTCondor"


def build_condor_pool(config: Mapping[str, Any]) -> tuple[PoolSource, list[AdviceSink]]:
    import htcondor2

    unbounded = unbounded_wait(htcondor2.param.get("ADVISOR_WAIT_BOUND"))
    if unbounded is not None:
        logging.getLogger("htcondor_advisor.pool").warning(
            "%s: advice may keep a job waiting for as long as it advises; set it to 86400 (a "
            "day) on every host, as deploy/common/40 ships it (docs/robust-policies.md)",
            unbounded,
        )

    mismatch = control_mismatch(
        htcondor2.param.get("ADVISOR_CONTROL_PERCENT"), int(config.get("control_percent", 0))
    )
    if mismatch is not None:
        logging.getLogger("htcondor_advisor.control").warning(
            "control.percent is %s but %s: the per-arm figures and the guard count jobs in the "
            "wrong arm; set both to the same number (docs/control-group.md)",
            config.get("control_percent", 0),
            mismatch,
        )

    token_file = config.get("token_file")
    token = read_token(Path(token_file)) if token_file else None
    address = collector_address(config["collector"])
    calls = BoundedCalls(float(config.get("call_timeout_s", 30.0)), child_params(config))
    collector = RemoteCollector(calls, address)

    def query_startds() -> list[Any]:
        return collector.query(htcondor2.AdTypes.Startd, projection=list(STARTD_PROJECTION))

    def locate(name: str) -> RemoteSchedd:
        return RemoteSchedd(calls, collector.locate(htcondor2.DaemonTypes.Schedd, name))

    def reader(name: str) -> ScheddReader:
        return ScheddReader(name, lambda: locate(name), Backoff(f"schedd {name}"))

    def collector_started() -> float | None:
        ads = collector.query(htcondor2.AdTypes.Collector, projection=list(COLLECTOR_START))
        starts = [t for ad in ads if (t := collector_start(ad)) is not None]
        return max(starts) if starts else None

    def schedd_names() -> list[str]:
        located = collector.query(htcondor2.AdTypes.Schedd, projection=["Name"])
        return [str(ad["Name"]) for ad in located]

    schedds = [reader(name) for name in config.get("schedds") or []]
    watts = {**NORMAL_WATTS, **config.get("watts", {})}
    inventory = machine_inventory(watts, config.get("types", {}))
    state_dir = config.get("state_dir")
    event_log = None
    if config.get("event_log"):
        event_log = EventLogFollower(Path(config["event_log"]), EventLogAttempts())
    source = CondorPoolSource(
        query_startds=query_startds,
        schedds=schedds,
        inventory=inventory,
        collector_backoff=Backoff(f"collector {address}"),
        collector_started=collector_started,
        collector_settles_s=float(config.get("collector_settles_s", COLLECTOR_SETTLES_S)),
        tracker=MachineTracker(active_idle_s=float(config.get("active_idle_s", 900.0))),
        event_log=event_log,
        event_log_schedd=config.get("event_log_schedd"),
        journal=Journal(Path(state_dir), config.get("journal_keep")) if state_dir else None,
        directory=None if schedds else ScheddDirectory(schedd_names, reader),
    )
    sinks: list[AdviceSink] = []
    if config.get("merge", token is not None) and token is not None:
        sinks.append(
            MergeStartdSink(
                collector=RemoteCollector(calls, address, token),
                slots=lambda: source.slot_names,
                policy=str(config.get("policy", "unknown")),
            )
        )
    if config.get("edit_jobs"):
        sinks.append(job_sink(htcondor2, collector, locate, config, source))
    return source, sinks


COLLECTOR_START = ("StatsLastUpdateTime", "StatsLifetime")


def collector_start(ad: Mapping[str, Any]) -> float | None:
    """When a collector started, from its own ad: it has no ``DaemonStartTime``, but its update
    statistics cover its whole life (``collector_stats.cpp``: ``StatsLifetime`` counts from
    its start, reset only on a reconfig under ``RESET_DC_STATS_ON_RECONFIG``)."""
    updated, lifetime = (ad.get(key) for key in COLLECTOR_START)
    if isinstance(updated, int | float) and isinstance(lifetime, int | float):
        return float(updated) - float(lifetime)
    return None


def child_params(config: Mapping[str, Any]) -> dict[str, str]:
    """HTCondor configuration for the calls' process. Schedd connections cannot be given a token
    the way the collector's can, so for the job edits the token's own directory becomes that
    process's ``SEC_TOKEN_DIRECTORY`` (the advisor's ``tokens.d`` of deploy/TOKENS.md: its
    tokens only)."""
    token_file = config.get("token_file")
    if config.get("edit_jobs") and token_file:
        return {"SEC_TOKEN_DIRECTORY": str(Path(token_file).parent)}
    return {}


def job_sink(
    htcondor2: Any,
    collector: RemoteCollector,
    locate: Callable[[str], RemoteSchedd],
    config: Mapping[str, Any],
    source: CondorPoolSource,
) -> ScheddJobSink:
    """The ``JobPrio``, ``AdvisorHoldUntil`` and ``AdvisorPriorHours`` sink, on the schedds
    named (every schedd the collector knows when none)."""
    names = config.get("schedds") or []

    def schedds() -> list[tuple[str, Any]]:
        located = names or [str(ad["Name"]) for ad in collector.query(
            htcondor2.AdTypes.Schedd, projection=["Name"])]  # fmt: skip
        return [(name, locate(name)) for name in located]

    return ScheddJobSink(
        schedds,
        source.understated,
        tuple(config.get("edit_owners") or ()),
        int(config.get("max_job_edits", 100)),
    )
