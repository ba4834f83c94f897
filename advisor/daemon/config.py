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

from advisor.daemon import fields as f
from advisor.daemon.config_control import CONTROL_KEYS
from advisor.daemon.config_errors import FAILED, Problems
from advisor.daemon.config_file import merge, read_yaml
from advisor.daemon.config_host import check_host
from advisor.daemon.config_policy import check_idle_models, check_policy, check_pool_fit
from advisor.daemon.pools import POOL_KINDS, REQUIRED, Key, check_pool


def _absolute(raw: Any, path: str) -> Path:
    """An absolute path: the daemon's working directory is / under systemd and another one in a
    shell, so a relative path would name two places."""
    directory = f.file_path(raw, path)
    if not directory.is_absolute():
        raise f.ConfigError(
            f"{path}: {str(directory)!r} is relative; give an absolute path such as "
            "/var/lib/htcondor-advisor"
        )
    return directory


SECTIONS: dict[str, dict[str, Key]] = {
    "policy": {
        "name": Key(f.text, "random", "registered policy (htcondor-advisor policies)"),
        "seed": Key(lambda v, p: None if v is None else f.seed(v, p), None, "policy seed"),
        "options": Key(lambda v, p: v, {}, "policy options (key: value)"),
    },
    "publish": {
        "listen": Key(f.address, "127.0.0.1:9681", "HTTP endpoint HOST:PORT"),
        "allow": Key(
            f.networks,
            ["127.0.0.0/8", "::1"],
            "networks, addresses or host names that may read /advice/MACHINE and /healthz "
            "(names resolved at start and on reload)",
        ),
        "admin": Key(
            f.networks,
            ["127.0.0.0/8", "::1"],
            "networks, addresses or host names that may also read /advice, /explain, /metrics",
        ),
        "advice_lifetime": Key(
            # the hook refuses expiries a day ahead of an execute point's clock: an hour for skew
            lambda v, p: f.duration(v, p, hi=f.DAY_S - 3600),
            3600,
            "advice expires this long after publishing",
        ),
        "interval": Key(
            lambda v, p: f.duration(v, p, lo=1.0, hi=f.DAY_S), 60, "how often advice is refreshed"
        ),
        "stale_after": Key(
            f.duration, 180, "renew advice only from a view of the pool at most this old"
        ),
        "dry_run": Key(f.boolean, False, "compute and log advice, publish nothing"),
    },
    "learning": {
        "observe_interval": Key(
            lambda v, p: f.duration(v, p, lo=1.0, hi=f.DAY_S), 60, "how often the pool is polled"
        ),
        "retrain": Key(f.cron, "0 0 1 * *", "retrain schedule, crontab in UTC"),
        "idle_models": Key(
            lambda v, p: None if v is None else _absolute(v, p),
            None,
            "a store train-idle wrote: an idle-* policy starts from its models at each start, "
            "not neutral until its first retraining (none: no store)",
        ),
    },
    "state": {
        "directory": Key(_absolute, None, "where snapshots live (an absolute path)"),
        "snapshot_interval": Key(
            f.duration, None, "how often learned state is saved (default 5m live, 1d in the twin)"
        ),
        "keep": Key(lambda v, p: f.integer(v, p, lo=1, hi=1000), 5, "snapshots kept"),
    },
    "metrics": {"enabled": Key(f.boolean, True, "serve /metrics")},
    "control": CONTROL_KEYS,
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
    control: dict[str, Any]
    source: str = "<defaults>"

    @property
    def simulated(self) -> bool:
        return POOL_KINDS[self.pool["kind"]].simulated

    @property
    def policy_seed(self) -> int:
        """The configured seed, else the simulated pool's seed (so a twin matches a replay)."""
        seed = self.policy["seed"]
        return int(seed if seed is not None else self.pool.get("seed", 0))


def _section(raw: Any, name: str, problems: Problems) -> dict[str, Any]:
    """The section with defaults filled in; a key that failed (each error goes to ``problems``)
    holds FAILED, as does every key of a section that is no mapping."""
    keys = SECTIONS[name]
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        problems.add(f.fail(name, "must be a mapping", raw))
        return dict.fromkeys(keys, FAILED)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in keys:
            where = f"{name}.{f.key_name(key)}"
            problems.add(f.fail(where, f"unknown key; allowed: {', '.join(keys)}", key))
            continue
        if value is None and keys[key].default is None:  # null: unset, as if left out
            continue
        out[key] = problems.check(keys[key].check, value, f"{name}.{key}")
    for key, spec in keys.items():
        if key not in out:
            assert spec.default is not REQUIRED
            out[key] = spec.default if spec.default is None else spec.check(spec.default, key)
    return out


def default_state_dir() -> Path:
    """systemd's ``$STATE_DIRECTORY`` when set, else ``advisor-state`` in the directory the
    daemon starts in, made absolute there (as ``state.directory`` must be)."""
    return Path(os.environ.get("STATE_DIRECTORY", "advisor-state").split(":")[0]).absolute()


def _check_timing(publish: dict[str, Any], learning: dict[str, Any]) -> None:
    """A view is confirmed once per poll: a bound below the poll interval would leave every
    cycle but the first stale. Advice renewed every ``interval`` that lives no longer would
    lapse between renewals, and the pool would flicker between advised and not."""
    stale, poll = publish["stale_after"], learning["observe_interval"]
    if FAILED not in (stale, poll) and stale < poll:
        raise f.ConfigError(
            f"publish.stale_after: {stale:g} s is shorter than learning.observe_interval "
            f"({poll:g} s); make it at least that, e.g. three intervals"
        )
    lifetime, interval = publish["advice_lifetime"], publish["interval"]
    if FAILED not in (lifetime, interval) and lifetime <= interval:
        raise f.ConfigError(
            f"publish.advice_lifetime: {lifetime:g} s is not longer than publish.interval "
            f"({interval:g} s), so advice would lapse between renewals; make it several "
            "intervals (default 1h)"
        )


def check_config(raw: Any, source: str = "<defaults>") -> DaemonConfig:
    """Check a parsed YAML document (a mapping of sections); a ConfigError names every mistake,
    one line each."""
    problems = Problems()
    config = _checked(raw, source, problems)
    problems.raise_any()
    return config


def _checked(raw: Any, source: str, problems: Problems) -> DaemonConfig:
    """The document checked section by section, each error recorded in ``problems``. What
    failed holds FAILED: the result serves further checks only, until the errors are raised."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        where = "<top>" if source.startswith("<") else source
        problems.add(f.fail(where, "must be a mapping of sections (pool:, policy:, ...)", raw))
        problems.raise_any()  # no section to check
    allowed = ("pool", *SECTIONS)
    for key in raw:
        if key not in allowed:
            where = f.key_name(key)
            problems.add(f.fail(where, f"unknown section; allowed: {', '.join(allowed)}", key))
    pool = FAILED
    if "pool" in raw:
        pool = check_pool(raw["pool"], problems)
    else:
        problems.add(
            f.ConfigError("pool: missing (required); e.g. pool: {kind: sim, scenario: campus}")
        )
    sections = {name: _section(raw.get(name), name, problems) for name in SECTIONS}
    check_policy(sections["policy"], problems)
    if pool is not FAILED:
        problems.check(check_pool_fit, sections["policy"]["name"], pool["kind"])
    problems.check(check_idle_models, sections["policy"]["name"], sections["learning"])
    problems.check(_check_timing, sections["publish"], sections["learning"])
    state = sections["state"]
    if state["snapshot_interval"] is None and pool is not FAILED:
        state["snapshot_interval"] = 86400.0 if POOL_KINDS[pool["kind"]].simulated else 300.0
    if state["directory"] is None:
        state["directory"] = default_state_dir()
    return DaemonConfig(pool=pool, source=source, **sections)


def load_config(
    path: Path, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> DaemonConfig:
    """Read, overlay command-line ``overrides`` section by section, check, and check what the
    configuration asks of this machine without changing anything (``check_host``). The
    ConfigError names every mistake found, one line each."""
    raw = read_yaml(path)
    problems = Problems()
    config = _checked(merge(raw, overrides or {}), str(path), problems)
    problems.check(check_host, config)
    problems.raise_any()
    return config
