"""Pool kinds the configuration accepts: ``sim`` (the digital twin) and ``condor`` (a live pool).

Each kind lists its keys with their checks and defaults, and how to build its source and sinks.
``condor`` is built by ``advisor.condor.factory.build_condor_pool``; the daemon adds what it owns
itself (its state directory for the journal, the advice lifetime, the policy label).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.daemon import fields as f
from advisor.daemon.config_errors import FAILED, Problems

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


def _path(raw: Any, path: str) -> Path | None:
    """A file path; null means none (every path key is optional)."""
    return None if raw is None else f.file_path(raw, path)


WATTS = ("active", "idle", "sleep")
MAX_DAYS = 3660
"""The twin simulates at most ten years."""
MAX_SCALE = 100.0
"""The twin's pool at most a hundred times the scenario's."""


def _watts(raw: Any, path: str) -> dict[str, float]:
    """``{active, idle, sleep}`` power draw in W, each >= 0 (docs/architecture.md, section 4)."""
    if not isinstance(raw, dict) or set(raw) != set(WATTS):
        raise f.fail(path, "must be a mapping with exactly active, idle and sleep (W)", raw)
    return {k: f.number(raw[k], f"{path}.{k}", lo=0.0) for k in WATTS}


def _types(raw: Any, path: str) -> dict[str, dict[str, float]]:
    """Watts per ``AdvisorMachineType`` value."""
    if not isinstance(raw, dict):
        raise f.fail(path, "must map AdvisorMachineType names to {active, idle, sleep}", raw)
    return {f.text(name, path): _watts(w, f"{path}.{f.key_name(name)}") for name, w in raw.items()}


COLLECTOR_PORT = 9618
"""HTCondor's default collector port, for a ``pool.collector`` that names only a host."""


def _collector(raw: Any, path: str) -> tuple[str, int]:
    """``HOST:PORT``, or ``HOST`` alone (``[::1]`` for IPv6) as HTCondor reads it: port 9618."""
    value = f.text(raw, path)
    if ":" not in value or (value.startswith("[") and value.endswith("]")):
        value = f"{value}:{COLLECTOR_PORT}"
    try:
        host, port = f.address(value, path)
    except f.ConfigError:
        host, port = value, 0  # the message below says what a collector may be
    if port == 0:
        raise f.fail(
            path, "must be HOST or HOST:PORT with a port 1-65535, e.g. cm.example.org:9618", raw
        )
    return host, port


def _build_condor(settings: Mapping[str, Any]) -> tuple[PoolSource, list[AdviceSink]]:
    from advisor.condor.factory import build_condor_pool

    return build_condor_pool(settings)


SIM_KEYS = {
    "scenario": Key(lambda v, p: f.choice(v, p, ("campus",)), "campus", "built-in scenario"),
    "scenario_config": Key(_path, None, "YAML describing another campus"),
    "days": Key(lambda v, p: f.integer(v, p, lo=1, hi=MAX_DAYS), 28, "simulated days"),
    "scale": Key(
        lambda v, p: f.number(v, p, lo=0.0, hi=MAX_SCALE, lo_open=True), 1.0, "pool size factor"
    ),
    "seed": Key(f.seed, 1, "scenario and tie-break seed"),
    "speed": Key(f.speed, "max", "simulated seconds per wall second, or max"),
    "reboot_hour": Key(f.hour_or_none, 3, "UTC hour of the scenario's nightly reboot, or null"),
    "wait_bound": Key(
        f.duration_or_none,
        86400,
        "the simulated pool's ADVISOR_WAIT_BOUND: a job idle this long in one wait is matched as "
        "without advice (null: no bound)",
    ),
}
CONDOR_KEYS = {
    "collector": Key(_collector, REQUIRED, "central manager HOST[:PORT], port 9618 by default"),
    "schedds": Key(f.text_list, [], "schedd names to read (empty: those the collector shows)"),
    "token_file": Key(_path, None, "IDTOKEN file for the advisor's identity"),
    "merge": Key(f.boolean, True, "also MERGE_STARTD_AD into the collector (needs token_file)"),
    "event_log": Key(_path, None, "a job event log to follow as well"),
    "event_log_schedd": Key(
        lambda v, p: None if v is None else f.text(v, p),
        None,
        "Name of the schedd whose jobs the event log records (null: the pool's only schedd)",
    ),
    "journal": Key(f.boolean, True, "journal observations in the state directory (trace export)"),
    "journal_keep": Key(
        lambda v, p: None if v is None else f.duration(v, p, lo=7 * f.DAY_S, hi=36_500 * f.DAY_S),
        400 * f.DAY_S,
        "how long the journal keeps an event (null: for ever)",
    ),
    "active_idle_s": Key(
        lambda v, p: f.duration(v, p, lo=0.0, hi=f.DAY_S),
        900,
        "keyboard idle below which the owner is present",
    ),
    "collector_settles_s": Key(
        lambda v, p: f.duration(v, p, lo=0.0, hi=f.DAY_S),
        600,
        "a collector this young misses ads: what it lacks is not taken as gone",
    ),
    "call_timeout_s": Key(
        lambda v, p: f.duration(v, p, lo=1.0, hi=600.0),
        30,
        "longest wait for one collector or schedd call",
    ),
    "edit_jobs": Key(
        f.boolean,
        False,
        "edit JobPrio, AdvisorHoldUntil, AdvisorNeedsHours and AdvisorPriorHours of idle jobs",
    ),
    "edit_owners": Key(f.text_list, [], "only these owners' jobs are edited ([] = any)"),
    "max_job_edits": Key(
        lambda v, p: f.integer(v, p, lo=1, hi=100_000), 100, "job edits per cycle at most"
    ),
    "reboot_hour": Key(
        f.hour_or_none,
        None,
        "UTC hour at which execute points without a logged-in owner reboot each night (null: "
        "they do not)",
    ),
    "watts": Key(_watts, {"active": 57, "idle": 40, "sleep": 2}, "W of untyped machines"),
    "types": Key(_types, {}, "W per AdvisorMachineType"),
}

POOL_KINDS: dict[str, PoolKind] = {
    "sim": PoolKind(SIM_KEYS, simulated=True),
    "condor": PoolKind(CONDOR_KEYS, simulated=False, build=_build_condor),
}


def check_pool(raw: Any, problems: Problems, path: str = "pool") -> Any:
    """The pool section with defaults filled in; ``kind`` picks which keys are allowed. Each
    error goes to ``problems``: a key that failed holds FAILED, and the whole section is FAILED
    when it has no valid kind (nothing else can be checked then)."""
    if not isinstance(raw, dict):
        problems.add(f.fail(path, "must be a mapping with a 'kind'", raw))
        return FAILED
    if "kind" not in raw:
        kinds = ", ".join(POOL_KINDS)
        problems.add(f.ConfigError(f"{path}.kind: missing (required); one of {kinds}"))
        return FAILED
    kind_name = problems.check(f.choice, raw["kind"], f"{path}.kind", tuple(POOL_KINDS))
    if kind_name is FAILED:
        return FAILED
    keys = POOL_KINDS[kind_name].keys
    settings: dict[str, Any] = {"kind": kind_name}
    for key, value in raw.items():
        if key == "kind":
            continue
        if key not in keys:
            allowed = ", ".join(["kind", *keys])
            what = f"unknown key for kind {kind_name}; allowed: {allowed}"
            problems.add(f.fail(f"{path}.{f.key_name(key)}", what, key))
            continue
        settings[key] = problems.check(keys[key].check, value, f"{path}.{key}")
    for key, spec in keys.items():
        if key in settings:
            continue
        if spec.default is REQUIRED:
            problems.add(
                f.ConfigError(f"{path}.{key}: missing (required for kind {kind_name}: {spec.help})")
            )
            settings[key] = FAILED
            continue
        settings[key] = spec.default if spec.default is None else spec.check(spec.default, key)
    return settings
