"""The daemon's YAML configuration: read, check every key, fill defaults.

Every error names the key path, the bad value and what is allowed; unknown keys are errors, so
a typo never silently becomes a default. ``htcondor-advisor check-config FILE`` runs exactly this.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.daemon import fields as f
from advisor.daemon.config_file import one_line, read_yaml
from advisor.daemon.config_host import check_host
from advisor.daemon.pools import POOL_KINDS, REQUIRED, Key, check_pool
from plugins.contract.policy import Option, OptionError, Policy, parse_options
from plugins.contract.registry import policy_class

SECTIONS: dict[str, dict[str, Key]] = {
    "policy": {
        "name": Key(f.text, "random", "registered policy (htcondor-advisor policies)"),
        "seed": Key(lambda v, p: None if v is None else f.seed(v, p), None, "policy seed"),
        "options": Key(lambda v, p: v, {}, "policy options (key: value)"),
    },
    "publish": {
        "listen": Key(f.address, "127.0.0.1:9681", "HTTP endpoint HOST:PORT"),
        "advice_lifetime": Key(
            lambda v, p: f.duration(v, p, hi=f.DAY_S),  # the hook refuses expiries a day ahead
            3600,
            "advice expires this long after publishing",
        ),
        "interval": Key(
            lambda v, p: f.duration(v, p, hi=f.DAY_S), 60, "how often advice is refreshed"
        ),
        "stale_after": Key(
            f.duration, 180, "renew advice only from a view of the pool at most this old"
        ),
        "dry_run": Key(f.boolean, False, "compute and log advice, publish nothing"),
    },
    "learning": {
        "observe_interval": Key(
            lambda v, p: f.duration(v, p, hi=f.DAY_S), 60, "how often the pool is polled"
        ),
        "retrain": Key(f.cron, "0 0 1 * *", "retrain schedule, crontab in UTC"),
    },
    "state": {
        "directory": Key(f.file_path, None, "where snapshots live"),
        "snapshot_interval": Key(
            f.duration, None, "how often learned state is saved (default 5m live, 1d in the twin)"
        ),
        "keep": Key(lambda v, p: f.integer(v, p, lo=1, hi=1000), 5, "snapshots kept"),
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
            where = f"{name}.{f.key_name(key)}"
            raise f.fail(where, f"unknown key; allowed: {', '.join(keys)}", key)
        out[key] = keys[key].check(value, f"{name}.{key}")
    for key, spec in keys.items():
        if key not in out:
            assert spec.default is not REQUIRED
            out[key] = spec.default if spec.default is None else spec.check(spec.default, key)
    return out


def _check_policy(section: dict[str, Any]) -> None:
    """Check the options as the policy will parse them; ``section["options"]`` becomes what the
    policy is given (YAML scalars for options read from text become that text)."""
    options = section["options"]
    if not isinstance(options, dict):
        raise f.fail("policy.options", "must be a mapping of option: value", options)
    try:
        cls = policy_class(section["name"])
    except OptionError as exc:
        raise f.ConfigError(f"policy.name: {exc}") from None
    except ImportError as exc:
        raise f.ConfigError(
            f"policy.name: policy {section['name']!r} is registered but does not load ({exc}); "
            "reinstall the package that provides it"
        ) from None
    options = {key: _option(cls, key, value) for key, value in options.items()}
    try:
        parsed = parse_options(cls, options)
    except OptionError as exc:
        raise f.ConfigError(f"policy.options: {exc}") from None
    except (TypeError, ValueError, ArithmeticError) as exc:  # a check that met the wrong type
        raise f.ConfigError(
            f"policy.options: policy {cls.NAME!r} cannot take {options!r} ({exc}); "
            "see htcondor-advisor policies for each option's values"
        ) from None
    for key in options:
        value = parsed[key]
        if isinstance(value, float) and not math.isfinite(value):
            raise f.fail(f"policy.options.{f.key_name(key)}", "must be a finite number", value)
    section["options"] = options


def _option(cls: type[Policy], key: Any, value: Any) -> Any:
    """An option's value as the policy gets it: text as written; a YAML number as its text, so
    the option's own parser checks it as it checks ``--set key=VALUE``; flags as they are."""
    opt: Option | None = cls.OPTIONS.get(key) if isinstance(key, str) else None
    if opt is None or isinstance(value, str):
        return value  # unknown options are parse_options' to name; text is parsed by the option
    path, default = f"policy.options.{key}", opt.default
    if isinstance(value, float) and not math.isfinite(value):
        raise f.fail(path, "must be a finite number", value)
    if isinstance(default, bool):
        return f.boolean(value, path)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, int) and not (number and isinstance(value, int)):
        raise f.fail(path, "must be an integer", value)
    if isinstance(default, float) and not number:
        raise f.fail(path, "must be a number", value)
    if number:
        return str(value)
    if isinstance(value, bool):  # YAML 1.1 reads a bare off/on as false/true
        return "on" if value else "off"
    raise f.fail(path, f"must be text as in --set {key}=VALUE (a number or true/false)", value)


def default_state_dir() -> Path:
    """systemd's ``$STATE_DIRECTORY`` when set, else ``./advisor-state``."""
    return Path(os.environ.get("STATE_DIRECTORY", "advisor-state").split(":")[0])


def _check_staleness(publish: dict[str, Any], learning: dict[str, Any]) -> None:
    """A view is confirmed once per poll: a bound below the poll interval would leave every
    cycle but the first stale."""
    if publish["stale_after"] < learning["observe_interval"]:
        raise f.ConfigError(
            f"publish.stale_after: {publish['stale_after']:g} s is shorter than "
            f"learning.observe_interval ({learning['observe_interval']:g} s); make it at least "
            "that, e.g. three intervals"
        )


def check_config(raw: Any, source: str = "<defaults>") -> DaemonConfig:
    """Check a parsed YAML document (a mapping of sections)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        where = "<top>" if source.startswith("<") else source
        raise f.fail(where, "must be a mapping of sections (pool:, policy:, ...)", raw)
    allowed = ("pool", *SECTIONS)
    for key in raw:
        if key not in allowed:
            raise f.fail(f.key_name(key), f"unknown section; allowed: {', '.join(allowed)}", key)
    if "pool" not in raw:
        raise f.ConfigError("pool: missing (required); e.g. pool: {kind: sim, scenario: campus}")
    pool = check_pool(raw["pool"])
    sections = {name: _section(raw.get(name), name) for name in SECTIONS}
    _check_policy(sections["policy"])
    _check_staleness(sections["publish"], sections["learning"])
    if sections["state"]["snapshot_interval"] is None:
        simulated = POOL_KINDS[pool["kind"]].simulated
        sections["state"]["snapshot_interval"] = 86400.0 if simulated else 300.0
    if sections["state"]["directory"] is None:
        sections["state"]["directory"] = default_state_dir()
    return DaemonConfig(pool=pool, source=source, **sections)


def load_config(
    path: Path, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> DaemonConfig:
    """Read, overlay command-line ``overrides`` section by section, check, and check what the
    configuration asks of this machine without changing anything (``check_host``)."""
    raw = read_yaml(path)
    try:
        config = check_config(merge(raw, overrides or {}), str(path))
    except f.ConfigError as exc:
        raise f.ConfigError(one_line(str(exc))) from None
    check_host(config)
    return config


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
