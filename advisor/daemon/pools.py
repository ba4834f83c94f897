"""Pool kinds the configuration accepts: ``sim`` (the digital twin) and ``condor`` (a live pool).

Each kind lists its keys with their checks and defaults, and how to build its source and sinks.
A kind whose ``build`` is None validates but cannot run yet; the live HTCondor issue plugs its
factory into the ``condor`` entry (one line), nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.daemon import fields as f

if TYPE_CHECKING:
    from advisor.ports import AdviceSink, PoolSource

REQUIRED = object()
Check = Callable[[Any, str], Any]
Factory = Callable[[Mapping[str, Any]], "tuple[PoolSource, list[AdviceSink]]"]


@dataclass(frozen=True)
class Key:
    check: Check
    default: Any = REQUIRED
    help: str = ""


@dataclass(frozen=True)
class PoolKind:
    keys: Mapping[str, Key]
    simulated: bool
    build: Factory | None = None
    """Live kinds: the source and sinks for validated settings (None: not available yet)."""


def _path(raw: Any, path: str) -> Path:
    return Path(f.text(raw, path))


SIM_KEYS = {
    "scenario": Key(lambda v, p: f.choice(v, p, ("campus",)), "campus", "built-in scenario"),
    "scenario_config": Key(_path, None, "YAML describing another campus"),
    "days": Key(lambda v, p: f.integer(v, p, lo=1), 28, "simulated days"),
    "scale": Key(lambda v, p: f.number(v, p, lo=0.0, lo_open=True), 1.0, "pool size factor"),
    "seed": Key(f.integer, 1, "scenario and tie-break seed"),
    "speed": Key(f.speed, "max", "simulated seconds per wall second, or max"),
}
CONDOR_KEYS = {
    "collector": Key(f.address, REQUIRED, "central manager HOST:PORT"),
    "schedds": Key(f.text_list, [], "schedd names to read job history from"),
    "token_file": Key(_path, None, "IDTOKEN file for the advisor's identity"),
}

POOL_KINDS: dict[str, PoolKind] = {
    "sim": PoolKind(SIM_KEYS, simulated=True),
    "condor": PoolKind(CONDOR_KEYS, simulated=False),
}


def check_pool(raw: Any, path: str = "pool") -> dict[str, Any]:
    """The pool section with defaults filled in; ``kind`` picks which keys are allowed."""
    if not isinstance(raw, dict):
        raise f.fail(path, "must be a mapping with a 'kind'", raw)
    if "kind" not in raw:
        raise f.ConfigError(f"{path}.kind: missing (required); one of {', '.join(POOL_KINDS)}")
    kind_name = f.choice(raw["kind"], f"{path}.kind", tuple(POOL_KINDS))
    keys = POOL_KINDS[kind_name].keys
    settings: dict[str, Any] = {"kind": kind_name}
    for key, value in raw.items():
        if key == "kind":
            continue
        if key not in keys:
            allowed = ", ".join(["kind", *keys])
            raise f.fail(
                f"{path}.{key}", f"unknown key for kind {kind_name}; allowed: {allowed}", key
            )
        settings[key] = keys[key].check(value, f"{path}.{key}")
    for key, spec in keys.items():
        if key in settings:
            continue
        if spec.default is REQUIRED:
            raise f.ConfigError(
                f"{path}.{key}: missing (required for kind {kind_name}: {spec.help})"
            )
        settings[key] = spec.default if spec.default is None else spec.check(spec.default, key)
    return settings
