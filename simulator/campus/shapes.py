"""Pool shapes: campus pools that differ from the bundled one in size, room mix and opening hours,
calendar, owner intensity, job volume and burstiness, runtime mix and never-finishing batches.

A shape is a small mapping of ranges over the bundled ``CampusConfig`` (``shapes.yaml`` documents
each key); a seed draws one member, so a policy can be judged on pools it was not tuned on. The
draw is separate from the scenario's own seed streams: the same seed gives the same member and,
through ``generate_campus``, the same trace. The empty shape ``campus`` is the bundled campus.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from plugins.contract.config_checks import ConfigError, LogNormal
from simulator.campus.job_config import AdminRemoval
from simulator.campus.scenario import read_yaml
from simulator.campus.scenario_config import CampusConfig, Period

LOG_UNIFORM = (
    "machines",
    "owner_intensity",
    "job_volume",
    "burstiness",
    "runtime_median_minutes",
    "remove_delay_median_hours",
    "admin_remove_median_hours",
)
UNIFORM = ("calendar_shift_days", "never_finish_fraction", "admin_remove_share")
FRACTIONS = ("never_finish_fraction", "admin_remove_share")
KEYS = (*LOG_UNIFORM, *UNIFORM, "rooms")
SHAPE_SEED = 0x5A9E
"""Mixed into a member's seed: shape draws never share a stream with the scenario's own."""


def load_shapes(
    path: Path | None = None, profiles: Collection[str] | None = None
) -> dict[str, dict[str, Any]]:
    """The named shapes of ``path`` (default: the packaged ``shapes.yaml``), checked; their
    rooms against ``profiles``, the opening-hour profiles of the campus they shape, if given."""
    name, raw = read_yaml(path, "shapes.yaml")
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"{name}: must map shape names to their ranges")
    shapes = {str(shape): check_shape(spec, f"{name}: {shape}") for shape, spec in raw.items()}
    for shape, spec in shapes.items():
        unknown = sorted(set(spec.get("rooms", {})) - set(profiles or spec.get("rooms", {})))
        if unknown:
            raise ConfigError(
                f"{name}: {shape}.rooms: unknown opening-hour profile {unknown[0]!r}; "
                f"the campus has {', '.join(sorted(profiles or ()))}"
            )
    return shapes


def check_shape(spec: Any, where: str) -> dict[str, Any]:
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: must be a mapping of {', '.join(KEYS)}")
    for key, value in spec.items():
        if key not in KEYS:
            raise ConfigError(f"{where}.{key}: unknown key; allowed: {', '.join(KEYS)}")
        if key == "rooms":
            if not isinstance(value, dict) or not value or not all(
                isinstance(w, int | float) and w >= 0 for w in value.values()
            ) or not sum(value.values()) > 0:  # fmt: skip
                raise ConfigError(f"{where}.rooms: must map opening-hour profiles to weights")
            continue
        low, high = value if isinstance(value, list) and len(value) == 2 else (value, value)
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (low, high)):
            raise ConfigError(f"{where}.{key}: must be a number or [low, high], got {value!r}")
        if low > high or (key in LOG_UNIFORM and not low > 0):
            raise ConfigError(f"{where}.{key}: needs 0 < low <= high, got {value!r}")
        if key in FRACTIONS and not 0 <= low <= high < 1:
            raise ConfigError(f"{where}.{key}: must lie in [0, 1), got {value!r}")
    return dict(spec)


def draw(spec: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One member's values: each key from its own stream, so adding a key moves no other."""
    values: dict[str, Any] = {}
    for i, key in enumerate(KEYS):
        if key not in spec or key == "rooms":
            continue
        value = spec[key]
        low, high = value if isinstance(value, list) else (value, value)
        rng = np.random.default_rng([SHAPE_SEED, seed, i])
        if key in LOG_UNIFORM:
            values[key] = float(np.exp(rng.uniform(np.log(low), np.log(high))))
        else:
            values[key] = float(rng.uniform(low, high))
    return values


def shape_member(base: CampusConfig, spec: Mapping[str, Any], seed: int) -> CampusConfig:
    """The campus of this shape for ``seed``: ``base`` with the drawn values applied."""
    v = draw(spec, seed)
    total = sum(c.machines for c in base.clusters)
    factor = v.get("machines", total) / total
    clusters = tuple(replace(c, machines=max(1, round(c.machines * factor))) for c in base.clusters)
    if "rooms" in spec:
        profiles = sorted(spec["rooms"])
        unknown = [p for p in profiles if p not in base.opening_hours]
        if unknown:
            raise ConfigError(f"rooms: unknown opening-hour profile {unknown[0]!r}")
        weights = np.array([spec["rooms"][p] for p in profiles], dtype=float)
        rng = np.random.default_rng([SHAPE_SEED, seed, len(KEYS)])
        picks = rng.choice(len(profiles), size=len(clusters), p=weights / weights.sum())
        clusters = tuple(
            replace(c, hours=profiles[k]) for c, k in zip(clusters, picks, strict=True)
        )
    owners = replace(
        base.owners,
        arrivals_per_year=base.owners.arrivals_per_year * factor * v.get("owner_intensity", 1.0),
    )
    shift = dt.timedelta(days=round(v.get("calendar_shift_days", 0.0)))
    calendar = replace(
        base.calendar,
        terms=tuple(moved(p, shift) for p in base.calendar.terms),
        exams=tuple(moved(p, shift) for p in base.calendar.exams),
    )
    return replace(
        base, clusters=clusters, owners=owners, calendar=calendar, jobs=jobs(base, v, factor)
    )


def moved(period: Period, shift: dt.timedelta) -> Period:
    return replace(period, start=period.start + shift, end=period.end + shift)


def jobs(base: CampusConfig, v: Mapping[str, float], factor: float) -> Any:
    """The job model: volume and bursts follow the pool's size and the drawn multipliers."""
    model = base.jobs
    bursty = v.get("burstiness", 1.0)
    burst_jobs = sum(b.jobs for b in model.bursts)
    steady = (model.per_year - burst_jobs) * factor * v.get("job_volume", 1.0)
    bursts = tuple(replace(b, jobs=max(1, round(b.jobs * factor * bursty))) for b in model.bursts)
    admin = model.admin_remove or AdminRemoval(0.0, LogNormal(300.0, 0.4, 24.0, 720.0))
    admin = replace(
        admin,
        share=v.get("admin_remove_share", admin.share),
        hours=replace(admin.hours, median=v.get("admin_remove_median_hours", admin.hours.median)),
    )
    return replace(
        model,
        per_year=round(steady) + sum(b.jobs for b in bursts),
        bursts=bursts,
        batch_size=replace(model.batch_size, median=model.batch_size.median * bursty),
        runtime_minutes=replace(
            model.runtime_minutes,
            median=v.get("runtime_median_minutes", model.runtime_minutes.median),
        ),
        never_finish_fraction=v.get("never_finish_fraction", model.never_finish_fraction),
        remove_delay_hours=replace(
            model.remove_delay_hours,
            median=v.get("remove_delay_median_hours", model.remove_delay_hours.median),
        ),
        admin_remove=admin if (model.admin_remove or admin.share) else None,
    )
