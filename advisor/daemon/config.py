"""The daemon's YAML configuration: read, check every key, fill defaults.

Every error names the key path, the bad value and what is allowed; unknown keys are errors, so
a typo never silently becomes a default. ``htcondor-advisor check-config FILE`` runs exactly this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from advisor.daemon import fields as f
from advisor.daemon.pools import POOL_KINDS, REQUIRED, Key, check_pool
from plugins.policy import OptionError, parse_options
from plugins.registry import policy_class

SECTIONS: dict[str, dict[str, Key]] = {
    "policy": {
        "name": Key(f.text, "random", "registered policy (htcondor-advisor policies)"),
        "seed": Key(lambda v, p: None if v is None else f.integer(v, p), None, "policy seed"),
        "options": Key(lambda v, p: v, {}, "policy options (key: value)"),
    },
    "publish": {
        "listen": Key(f.address, "127.0.0.1:9681", "HTTP endpoint HOST:PORT"),
        "advice_lifetime": Key(f.duration, 3600, "advice expires this long after publishing"),
        "interval": Key(f.duration, 60, "how often advice is refreshed"),
        "dry_run": Key(f.boolean, False, "compute and log advice, publish nothing"),
    },
    "learning": {
        "observe_interval": Key(f.duration, 60, "how often the pool is polled"),
        "retrain": Key(f.cron, "0 0 1 * *", "retrain schedule, crontab in UTC"),
    },
    "state": {
        "directory": Key(lambda v, p: Path(f.text(v, p)), None, "where snapshots live"),
        "snapshot_interval": Key(
            f.duration, None, "how often learned state is saved (default 5m live, 1d in the twin)"
        ),
        "keep": Key(lambda v, p: f.integer(v, p, lo=1), 5, "snapshots kept"),
    },
    "metrics": {"enabled": Key(f.boolean, True, "serve /metrics")},
    "logging": {
        "level": Key(
            lambda v, p: f.choice(str(v).upper(), p, f.LOG_LEVELS),
            None,
            "log level (default: the command line's --log-level, INFO)",
        )
    },
}


@dataclass(frozen=True)
class DaemonConfig:
    """Checked configuration; sections are plain dicts of checked values."""

    pool: dict[str, Any]
    policy: dict[str, Any]
    publish: dict[str, Any]
    learning: dict[str, Any]
    state: dict[str, Any]
    metrics: dict[str, Any]
    logging: dict[str, Any]
    source: str = "<defaults>"

    @property
    def simulated(self) -> bool:
        return POOL_KINDS[self.pool["kind"]].simulated

    @property
    def policy_seed(self) -> int:
        """The configured seed, else the simulated pool's seed (so a twin matches a replay)."""
        seed = self.policy["seed"]
        return int(seed if seed is not None else self.pool.get("seed", 0))


def _section(raw: Any, name: str) -> dict[str, Any]:
    keys = SECTIONS[name]
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise f.fail(name, "must be a mapping", raw)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in keys:
            raise f.fail(f"{name}.{key}", f"unknown key; allowed: {', '.join(keys)}", key)
        out[key] = keys[key].check(value, f"{name}.{key}")
    for key, spec in keys.items():
        if key not in out:
            assert spec.default is not REQUIRED
            out[key] = spec.default if spec.default is None else spec.check(spec.default, key)
    return out


def _check_policy(section: dict[str, Any]) -> None:
    options = section["options"]
    if not isinstance(options, dict):
        raise f.fail("policy.options", "must be a mapping of option: value", options)
    try:
        parse_options(policy_class(section["name"]), options)
    except OptionError as exc:
        where = "policy.name" if "unknown policy" in str(exc) else "policy.options"
        raise f.ConfigError(f"{where}: {exc}") from None


def default_state_dir() -> Path:
    """systemd's ``$STATE_DIRECTORY`` when set, else ``./advisor-state``."""
    return Path(os.environ.get("STATE_DIRECTORY", "advisor-state").split(":")[0])


def check_config(raw: Any, source: str = "<defaults>") -> DaemonConfig:
    """Check a parsed YAML document (a mapping of sections)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise f.fail("<top>", "must be a mapping of sections", raw)
    allowed = ("pool", *SECTIONS)
    for key in raw:
        if key not in allowed:
            raise f.fail(str(key), f"unknown section; allowed: {', '.join(allowed)}", key)
    if "pool" not in raw:
        raise f.ConfigError("pool: missing (required); e.g. pool: {kind: sim, scenario: campus}")
    pool = check_pool(raw["pool"])
    sections = {name: _section(raw.get(name), name) for name in SECTIONS}
    _check_policy(sections["policy"])
    if sections["state"]["snapshot_interval"] is None:
        simulated = POOL_KINDS[pool["kind"]].simulated
        sections["state"]["snapshot_interval"] = 86400.0 if simulated else 300.0
    if sections["state"]["directory"] is None:
        sections["state"]["directory"] = default_state_dir()
    return DaemonConfig(pool=pool, source=source, **sections)


def read_yaml(path: Path) -> Any:
    """Parse ``path``; a YAML syntax error names the file, line and column."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise f.ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise f.ConfigError(f"{where}: not valid YAML ({exc.problem})") from None


def load_config(
    path: Path, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> DaemonConfig:
    """Read, overlay command-line ``overrides`` section by section, and check."""
    raw = read_yaml(path)
    return check_config(merge(raw, overrides or {}), str(path))


def merge(raw: Any, overrides: Mapping[str, Mapping[str, Any]]) -> Any:
    """``raw`` with each override section's keys replaced (a new pool kind replaces the pool)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return raw
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    for section, values in overrides.items():
        base = out.get(section)
        replace = (
            section == "pool"
            and isinstance(base, dict)
            and base.get("kind") != values.get("kind", base.get("kind"))
        )
        if not isinstance(base, dict) or replace:
            out[section] = dict(values)
        else:
            for key, value in values.items():
                old = base.get(key)
                base[key] = (
                    {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
                )
    return out
