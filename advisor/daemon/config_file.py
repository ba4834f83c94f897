"""Reading the daemon's configuration file (strict YAML, ``plugins/contract/yaml_text.py``),
kept apart from the key checks; ``merge`` lays the command line's overrides over what was read,
before the keys are checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.daemon import fields as f
from plugins.contract.yaml_text import parse_yaml


def read_yaml(path: Path) -> Any:
    """Parse ``path`` as UTF-8 YAML; every way it can fail is a ConfigError naming the file, and
    the line and column when there is one."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise f.ConfigError(
            f"{path}: cannot read ({exc.strerror or exc}); give the path of a readable YAML file"
        ) from None
    return parse_yaml(data, str(path))


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
