"""Typed, validated form of ``campus.yaml``.

Every key is checked (unknown keys are errors, so a typo never silently falls back to a default)
and every error names the key path and what is allowed, because the person editing the YAML is the
only one who can fix it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from plugins.contract.config_checks import (
    DAY_NAMES,
    LogNormal,
    date_value,
    fail,
    hourly_shape,
    integer,
    lognormal,
    mapping,
    number,
    week_hours,
)
from simulator.campus.job_config import JobModel, parse_job_model

DAY_KINDS = ("vacation", "term", "exams", "closure")


@dataclass(frozen=True, slots=True)
class MachineType:
    cores: int
    active_watts: tuple[float, float]
    idle_watts: tuple[float, float]
    sleep_watts: float


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    name: str
    machines: int
    mtype: str
    hours: str
    popularity: float
    classes: int


@dataclass(frozen=True, slots=True)
class Period:
    name: str
    start: dt.date
    end: dt.date
    """Inclusive last day."""


@dataclass(frozen=True, slots=True)
class Calendar:
    terms: tuple[Period, ...]
    exams: tuple[Period, ...]
    closures: tuple[Period, ...]


@dataclass(frozen=True, slots=True)
class OwnerModel:
    arrivals_per_year: float
    hourly_shape: tuple[float, ...]
    weekday_factors: tuple[float, ...]
    day_factors: dict[str, float]
    daily_noise_sigma: float
    session_minutes: LogNormal
    class_attendance: float
    class_hours: tuple[int, ...]
    class_late_minutes: float
    class_early_leave_minutes: float


@dataclass(frozen=True, slots=True)
class CampusConfig:
    year_start: dt.datetime
    machine_types: dict[str, MachineType]
    opening_hours: dict[str, tuple[tuple[float, float] | None, ...]]
    clusters: tuple[ClusterSpec, ...]
    calendar: Calendar
    owners: OwnerModel
    jobs: JobModel


def _watts(raw: Any, path: str) -> tuple[float, float]:
    if isinstance(raw, list):
        if len(raw) != 2:
            raise fail(path, "must be a number or a [low, high] range", raw)
        lo, hi = number(raw[0], f"{path}[0]"), number(raw[1], f"{path}[1]")
        if lo > hi:
            raise fail(path, "range must be [low, high] with low <= high", raw)
        return lo, hi
    val = number(raw, path)
    return val, val


def _periods(raw: Any, path: str) -> tuple[Period, ...]:
    if not isinstance(raw, list):
        raise fail(path, "must be a list of {name?, start, end}", raw)
    out = []
    for i, item in enumerate(raw):
        p = f"{path}[{i}]"
        m = mapping(item, p, ("start", "end"), ("name",))
        start, end = date_value(m["start"], f"{p}.start"), date_value(m["end"], f"{p}.end")
        if end < start:
            raise fail(f"{p}.end", f"must not be before start ({start})", str(end))
        out.append(Period(str(m.get("name", "")), start, end))
    return tuple(out)


def _owners(raw: Any, path: str) -> OwnerModel:
    keys = ("arrivals_per_year", "hourly_shape", "weekday_factors", "day_factors")
    more = ("daily_noise_sigma", "session_minutes", "classes")
    m = mapping(raw, path, keys + more)
    wf = mapping(m["weekday_factors"], f"{path}.weekday_factors", DAY_NAMES)
    df = mapping(m["day_factors"], f"{path}.day_factors", DAY_KINDS)
    c = mapping(
        m["classes"],
        f"{path}.classes",
        ("attendance", "hours", "late_minutes", "early_leave_minutes"),
    )
    hours = c["hours"]
    if not isinstance(hours, list) or not hours:
        raise fail(
            f"{path}.classes.hours", "must be a non-empty list of class lengths in hours", hours
        )
    return OwnerModel(
        arrivals_per_year=number(m["arrivals_per_year"], f"{path}.arrivals_per_year"),
        hourly_shape=hourly_shape(m["hourly_shape"], f"{path}.hourly_shape"),
        weekday_factors=tuple(number(wf[d], f"{path}.weekday_factors.{d}") for d in DAY_NAMES),
        day_factors={k: number(df[k], f"{path}.day_factors.{k}") for k in DAY_KINDS},
        daily_noise_sigma=number(m["daily_noise_sigma"], f"{path}.daily_noise_sigma", hi=2.0),
        session_minutes=lognormal(m["session_minutes"], f"{path}.session_minutes"),
        class_attendance=number(c["attendance"], f"{path}.classes.attendance", hi=1.0),
        class_hours=tuple(integer(h, f"{path}.classes.hours[{i}]", 1) for i, h in enumerate(hours)),
        class_late_minutes=number(c["late_minutes"], f"{path}.classes.late_minutes", hi=60),
        class_early_leave_minutes=number(
            c["early_leave_minutes"], f"{path}.classes.early_leave_minutes", hi=60
        ),
    )


def parse_campus_config(raw: Any) -> CampusConfig:
    """Validate the parsed YAML document and build the typed configuration."""
    top = ("year_start", "machine_types", "opening_hours", "clusters", "calendar", "owners", "jobs")
    m = mapping(raw, "", top)
    start = date_value(m["year_start"], "year_start")
    types: dict[str, MachineType] = {}
    mt = m["machine_types"]
    if not isinstance(mt, dict) or not mt:
        raise fail("machine_types", "must map type names to {cores, active_watts, ...}", mt)
    for name, t in mt.items():
        p = f"machine_types.{name}"
        tm = mapping(t, p, ("cores", "active_watts", "idle_watts", "sleep_watts"))
        types[str(name)] = MachineType(
            integer(tm["cores"], f"{p}.cores", 1),
            _watts(tm["active_watts"], f"{p}.active_watts"),
            _watts(tm["idle_watts"], f"{p}.idle_watts"),
            number(tm["sleep_watts"], f"{p}.sleep_watts"),
        )
    oh = m["opening_hours"]
    if not isinstance(oh, dict) or not oh:
        raise fail("opening_hours", "must map profile names to per-day hours", oh)
    hours = {str(k): week_hours(v, f"opening_hours.{k}") for k, v in oh.items()}
    if not isinstance(m["clusters"], list) or not m["clusters"]:
        raise fail("clusters", "must be a non-empty list of clusters", m["clusters"])
    clusters, seen = [], set()
    for i, c in enumerate(m["clusters"]):
        p = f"clusters[{i}]"
        cm = mapping(c, p, ("name", "machines", "type", "hours", "popularity"), ("classes",))
        name = cm["name"]
        if not isinstance(name, str) or not name.replace("-", "").isalnum() or name in seen:
            raise fail(f"{p}.name", "must be a unique name of letters, digits and '-'", name)
        seen.add(name)
        if cm["type"] not in types:
            raise fail(f"{p}.type", f"must be one of {', '.join(types)}", cm["type"])
        if cm["hours"] not in hours:
            raise fail(f"{p}.hours", f"must be one of {', '.join(hours)}", cm["hours"])
        clusters.append(
            ClusterSpec(
                name,
                integer(cm["machines"], f"{p}.machines", 1),
                cm["type"],
                cm["hours"],
                number(cm["popularity"], f"{p}.popularity"),
                integer(cm.get("classes", 0), f"{p}.classes"),
            )
        )
    cal = mapping(m["calendar"], "calendar", ("terms", "exams", "closures"))
    calendar = Calendar(
        *(_periods(cal[k], f"calendar.{k}") for k in ("terms", "exams", "closures"))
    )
    return CampusConfig(
        year_start=dt.datetime(start.year, start.month, start.day, tzinfo=dt.UTC),
        machine_types=types,
        opening_hours=hours,
        clusters=tuple(clusters),
        calendar=calendar,
        owners=_owners(m["owners"], "owners"),
        jobs=parse_job_model(m["jobs"], "jobs", start.year),
    )
