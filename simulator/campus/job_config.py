"""Typed, validated ``jobs`` section of ``campus.yaml``: the HTC workload of the campus scenario.

Split from ``campus_config`` (the machines, calendar and owners) along the YAML's own seam; every
error names the key path and what is allowed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from plugins.contract.config_checks import (
    LogNormal,
    clock,
    date_value,
    fail,
    hourly_shape,
    integer,
    lognormal,
    mapping,
    number,
)


@dataclass(frozen=True, slots=True)
class Burst:
    date: dt.date
    jobs: int
    user: str
    batches: int
    start_hour: float
    end_hour: float
    runtime_median_minutes: float | None = None


@dataclass(frozen=True, slots=True)
class AdminRemoval:
    """Broken batches nobody watches: the administrator kills them after days, not hours."""

    share: float
    """Share of the broken batches (the rest follow ``remove_delay_hours``)."""
    hours: LogNormal


@dataclass(frozen=True, slots=True)
class JobModel:
    per_year: int
    users: int
    user_zipf: float
    batch_size: LogNormal
    submit_spacing_seconds: float
    hourly_shape: tuple[float, ...]
    runtime_minutes: LogNormal
    runtime_user_sigma: float
    runtime_job_sigma: float
    never_finish_fraction: float
    remove_delay_hours: LogNormal
    bursts: tuple[Burst, ...]
    runtime_size_exponent: float = 0.0
    replicable_fraction: float = 0.0
    """Share of jobs the replica policies may run as several replicas (paper 003 sec. 5)."""
    admin_remove: AdminRemoval | None = None
    request_cpus: tuple[tuple[int, float], ...] = ()
    """Cores a batch requests and the share of batches that do (empty: one core, HTCondor's
    default; drawn only when configured, so other traces stay as they were)."""


def _burst(raw: Any, p: str, users: int) -> Burst:
    bm = mapping(raw, p, ("date", "jobs", "user", "batches", "from", "to"), ("runtime_minutes",))
    if bm["user"] not in [f"user{k:02d}" for k in range(1, users + 1)]:
        raise fail(f"{p}.user", f"must be one of user01..user{users:02d}", bm["user"])
    a, z = clock(str(bm["from"]), f"{p}.from"), clock(str(bm["to"]), f"{p}.to")
    if a >= z:
        raise fail(f"{p}.to", "must be after from", bm["to"])
    jobs, batches = integer(bm["jobs"], f"{p}.jobs", 1), integer(bm["batches"], f"{p}.batches", 1)
    runtime = bm.get("runtime_minutes")
    median = None if runtime is None else number(runtime, f"{p}.runtime_minutes", 0.0, 1440, True)
    day = date_value(bm["date"], f"{p}.date")
    return Burst(day, jobs, bm["user"], batches, a / 3600, z / 3600, median)


def parse_job_model(raw: Any, path: str, year: int) -> JobModel:
    """The ``jobs`` mapping at ``path``; bursts must fit in ``per_year`` of ``year``."""
    keys = ("per_year", "users", "user_zipf", "batch_size", "submit_spacing_seconds")
    more = ("hourly_shape", "runtime_minutes", "never_finish_fraction", "remove_delay_hours")
    optional = ("runtime_size_exponent", "replicable_fraction", "admin_remove", "request_cpus")
    m = mapping(raw, path, (*keys, *more, "bursts"), optional)
    rt = mapping(m["runtime_minutes"], f"{path}.runtime_minutes", ("median", "sigma", "min", "max"))
    rt = {
        **rt,
        "sigma": mapping(rt["sigma"], f"{path}.runtime_minutes.sigma", ("user", "batch", "job")),
    }
    sig = {k: number(v, f"{path}.runtime_minutes.sigma.{k}") for k, v in rt["sigma"].items()}
    runtime = lognormal({**rt, "sigma": sig["batch"]}, f"{path}.runtime_minutes")
    if runtime.hi > 1440:
        raise fail(
            f"{path}.runtime_minutes.max", "must be <= 1440 (no job runs over 24 h)", runtime.hi
        )
    users = integer(m["users"], f"{path}.users", 1)
    bursts = [_burst(b, f"{path}.bursts[{i}]", users) for i, b in enumerate(m["bursts"] or [])]
    per_year = integer(m["per_year"], f"{path}.per_year")
    if sum(b.jobs for b in bursts if b.date.year == year) > per_year:
        raise fail(f"{path}.bursts", "burst jobs in the year exceed jobs.per_year", per_year)
    return JobModel(
        per_year=per_year,
        users=users,
        user_zipf=number(m["user_zipf"], f"{path}.user_zipf"),
        batch_size=lognormal(m["batch_size"], f"{path}.batch_size"),
        submit_spacing_seconds=number(
            m["submit_spacing_seconds"], f"{path}.submit_spacing_seconds"
        ),
        hourly_shape=hourly_shape(m["hourly_shape"], f"{path}.hourly_shape"),
        runtime_minutes=runtime,
        runtime_user_sigma=sig["user"],
        runtime_job_sigma=sig["job"],
        never_finish_fraction=number(
            m["never_finish_fraction"], f"{path}.never_finish_fraction", hi=1
        ),
        remove_delay_hours=lognormal(m["remove_delay_hours"], f"{path}.remove_delay_hours"),
        bursts=tuple(bursts),
        runtime_size_exponent=number(
            m.get("runtime_size_exponent", 0.0), f"{path}.runtime_size_exponent", 0.0, 2.0
        ),
        replicable_fraction=number(
            m.get("replicable_fraction", 0.0), f"{path}.replicable_fraction", 0.0, 1.0
        ),
        admin_remove=None if m.get("admin_remove") is None else _admin(m, f"{path}.admin_remove"),
        request_cpus=_request_cpus(m.get("request_cpus"), f"{path}.request_cpus"),
    )


def _request_cpus(raw: Any, p: str) -> tuple[tuple[int, float], ...]:
    """``{cores: share, ...}`` with shares adding up to 1."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        raise fail(p, "must map cores to the share of batches requesting them", raw)
    shares = tuple(
        (integer(k, f"{p}.{k}", 1), number(v, f"{p}.{k}", 0.0, 1.0)) for k, v in raw.items()
    )
    if abs(sum(share for _, share in shares) - 1.0) > 1e-6:
        raise fail(p, "shares must add up to 1", raw)
    return shares


def _admin(m: dict[str, Any], p: str) -> AdminRemoval:
    am = mapping(m["admin_remove"], p, ("share", "hours"))
    return AdminRemoval(
        number(am["share"], f"{p}.share", 0.0, 1.0), lognormal(am["hours"], f"{p}.hours")
    )
