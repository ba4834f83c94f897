"""The ``campus`` scenario: a deterministic synthetic year of a Newcastle-like multi-use pool.

No real trace of the pool in the papers is public, so this generator reproduces its published
statistics (about 1,400 PCs in 37 rooms, 1.23 M seasonal owner sessions, 0.53 M bursty jobs of which
a quarter never finish) with structure a learner can find: room popularity, opening hours, term
calendar, weekly timetables and the hour of day. ``campus.yaml`` documents every number.
"""

from __future__ import annotations

import datetime as dt
import logging
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from plugins.contract.config_checks import ConfigError
from plugins.contract.yaml_text import parse_yaml
from simulator.campus.jobs import generate_jobs
from simulator.campus.owners import Room, owner_sessions, walkin_base_rate
from simulator.campus.scenario_config import DAY_KINDS, CampusConfig, Period, parse_campus_config
from simulator.trace_model import (
    DAY,
    EPOCH_WEEKDAY,
    Cluster,
    Inventory,
    MachineSpec,
    OpeningHours,
    Trace,
)

__all__ = ["CampusConfig", "ConfigError", "generate_campus", "load_campus_config"]

log = logging.getLogger(__name__)


def read_yaml(path: str | Path | None, packaged: str) -> tuple[str, Any]:
    """The user's YAML file ``path``, else the one packaged here (``campus.yaml``,
    ``shapes.yaml``), strictly parsed; and its name for messages."""
    if path is None:
        return packaged, parse_yaml(
            resources.files(__package__).joinpath(packaged).read_bytes(), packaged
        )
    return str(path), parse_yaml(Path(path).read_bytes(), str(path))


def load_campus_config(path: str | Path | None = None) -> CampusConfig:
    """Read and validate a campus description; ``None`` reads the packaged ``campus.yaml``."""
    name, raw = read_yaml(path, "campus.yaml")
    try:
        return parse_campus_config(raw)
    except ConfigError as exc:
        raise ConfigError(f"{name}: {exc}") from None


def _shift(day: dt.date, years: int) -> dt.date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February in a common year
        return day.replace(year=day.year + years, day=28)


def _occurrences(
    periods: tuple[Period, ...], ref_year: int, first: dt.date, days: int
) -> list[tuple[int, int]]:
    """Periods repeated yearly, as (first, last) day indices from ``first``, touching the window."""
    last = first + dt.timedelta(days=days - 1)
    out = []
    for k in range(first.year - ref_year - 1, last.year - ref_year + 2):
        for p in periods:
            a, b = _shift(p.start, k), _shift(p.end, k)
            if b >= first and a <= last:
                out.append(((a - first).days, (b - first).days))
    return sorted(out)


def calendar_days(
    cfg: CampusConfig, days: int
) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """Kind of each day (index into DAY_KINDS), weekday of each day, and the terms' day ranges."""
    first = cfg.year_start.date()
    ref = first.year
    kinds = np.zeros(days, dtype=np.int64)
    cal = cfg.calendar
    for kind, periods in (("term", cal.terms), ("exams", cal.exams), ("closure", cal.closures)):
        for a, b in _occurrences(periods, ref, first, days):
            kinds[max(a, 0) : b + 1] = DAY_KINDS.index(kind)
    t0 = cfg.year_start.timestamp()
    wdays = (int(t0 // DAY) + np.arange(days) + EPOCH_WEEKDAY) % 7
    return kinds, wdays, _occurrences(cal.terms, ref, first, days)


def _inventory(cfg: CampusConfig, scale: float) -> list[Room]:
    """Rooms at this scale: at least one PC each, numbered consecutively in the inventory."""
    rooms: list[Room] = []
    first = 0
    for spec in cfg.clusters:
        n = max(1, round(spec.machines * scale))
        rooms.append(Room(spec, n, first, cfg.opening_hours[spec.hours]))
        first += n
    return rooms


def _machines(cfg: CampusConfig, rooms: list[Room], rng: np.random.Generator) -> list[MachineSpec]:
    hunger = rng.random(len(rooms))  # one draw per room: its PCs were bought together
    out = []
    for room, u in zip(rooms, hunger, strict=True):
        t = cfg.machine_types[room.spec.mtype]
        active = round(t.active_watts[0] + u * (t.active_watts[1] - t.active_watts[0]))
        idle = round(t.idle_watts[0] + u * (t.idle_watts[1] - t.idle_watts[0]))
        for i in range(room.n):
            name = f"{room.spec.name}-{i + 1:03d}"
            out.append(
                MachineSpec(
                    name,
                    room.spec.name,
                    room.spec.mtype,
                    t.cores,
                    float(active),
                    float(idle),
                    t.sleep_watts,
                )
            )
    return out


def generate_campus(
    config: CampusConfig, days: int = 365, scale: float = 1.0, seed: int = 1
) -> Trace:
    """``days`` days of the campus from its year start, shrunk by ``scale``; same seed, same trace.

    Machines, owner sessions and jobs shrink together with ``scale`` (rooms keep at least one PC).
    Rates are calibrated on the full year, so a shorter run follows the yearly pattern.
    """
    if not isinstance(days, int) or days < 1:
        raise ValueError(f"days must be a positive integer, got {days!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    inv_rng, own_rng, job_rng = np.random.default_rng(seed).spawn(3)
    t0 = config.year_start.timestamp()
    rooms = _inventory(config, scale)
    machines = _machines(config, rooms, inv_rng)
    clusters = {r.spec.name: Cluster(r.spec.name, OpeningHours(r.hours)) for r in rooms}

    kinds_year, wdays_year, _ = calendar_days(config, 365)
    base = walkin_base_rate(config, kinds_year, wdays_year)
    kinds, wdays, terms = calendar_days(config, days)
    owners, full = owner_sessions(config, rooms, t0, kinds, wdays, terms, base, own_rng)
    log.debug("campus: %d sessions, %d arrivals found their room full", len(owners), full)
    jobs = generate_jobs(config.jobs, t0, days, scale, job_rng)
    return Trace(
        inventory=Inventory(clusters, machines),
        owners=owners,
        jobs=jobs,
        start=t0,
        end=t0 + days * DAY,
        terms=[(t0 + a * DAY, t0 + (b + 1) * DAY) for a, b in terms],
    )
