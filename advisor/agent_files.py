"""Trained agents on disk, read for the policies that run them (policies read no files).

A policy with an ``agent`` option (``or-ppo``) names a file, or the name of an agent shipped in
``advisor/power_agents/``; every host (replay, daemon, twin, experiments) passes the option
through ``with_agent``, which replaces the name by the file's contents: ``{"params": weights,
"meta": what train-power recorded}``. The files are ``train-power``'s ``.npz``: arrays
``p_<name>`` (weights; ``m_``/``v_`` Adam moments in checkpoints) and a JSON ``meta``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from plugins.contract.registry import policy_class

SHIPPED = Path(__file__).with_name("power_agents")
"""Agents shipped with the package (``or-ppo-<log>.npz``, their record in ``agents.json``)."""
AGENT_FILE = "or-ppo-{}-agent.npz"
"""The agent file ``train-power --out DIR`` writes in DIR for a log (its name, formatted)."""


def shipped_names() -> list[str]:
    return sorted(p.stem.removeprefix("or-ppo-") for p in SHIPPED.glob("or-ppo-*.npz"))


def agent_path(value: str) -> Path:
    """A shipped agent's file by its log name, else the path given; neither is one line."""
    if value in shipped_names():
        return SHIPPED / f"or-ppo-{value}.npz"
    path = Path(value)
    if path.is_dir():
        raise FileNotFoundError(_directory_given(value, path))
    if not path.is_file():
        raise FileNotFoundError(
            f"agent {value!r}: no such file and no shipped agent of that name (shipped: "
            f"{', '.join(shipped_names())}); train one with htcondor-advisor train-power"
        )
    return path


def _directory_given(value: str, path: Path) -> str:
    """A directory, often train-power's ``--out``: the agent files found in it, or the name
    of the file that train-power writes there."""
    found = sorted(str(p) for p in path.glob(AGENT_FILE.format("*")))
    named = (
        f"name one of the agent files in it: {', '.join(found)}"
        if found
        else f"name the agent file train-power wrote (train-power --out DIR writes "
        f"DIR/{AGENT_FILE.format('LOG')}), or a shipped agent ({', '.join(shipped_names())})"
    )
    return f"agent {value!r}: a directory, not an agent file; {named}"


def read_npz(path: Path) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any]]:
    """The arrays of a train-power file grouped by prefix (``p``, ``m``, ``v``), and its meta."""
    try:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            groups: dict[str, dict[str, np.ndarray]] = {}
            for key in data.files:
                prefix, _, name = key.partition("_")
                if name:
                    groups.setdefault(prefix, {})[name] = data[key]
    except (OSError, ValueError, KeyError):  # numpy's own words suggest unsafe loading
        raise FileNotFoundError(
            f"{path}: not an agent written by train-power (no .npz of its arrays and record)"
        ) from None
    return groups, meta


def read_agent(value: str) -> dict[str, Any]:
    """What an ``agent`` option gets: the weights and the training record of the file."""
    path = agent_path(value)
    groups, meta = read_npz(path)
    if "p" not in groups:
        raise FileNotFoundError(f"{path}: holds no weights (p_* arrays); not a train-power file")
    return {"params": groups["p"], "meta": meta | {"file": str(path)}}


def missing_agent(policy: str, options: Mapping[str, Any]) -> str | None:
    """What is wrong with the ``agent`` option of a policy that runs one, before anything is
    run (``check-config``): none given, or no such file or shipped name; None when it is fine."""
    if "agent" not in policy_class(policy).OPTIONS:
        return None
    value = options.get("agent")
    if not value or value == "off":
        names = ", ".join(shipped_names())
        return (
            f"policy {policy!r} needs a trained agent: a file train-power wrote, or a shipped "
            f"name ({names}); train one with htcondor-advisor train-power"
        )
    try:
        read_agent(str(value))
    except FileNotFoundError as exc:
        return str(exc)
    return None


def with_agent(policy: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with a named agent replaced by its contents (other policies: unchanged)."""
    out = dict(options)
    if (
        "agent" in policy_class(policy).OPTIONS
        and isinstance(out.get("agent"), str)
        and out["agent"]
    ):
        out["agent"] = read_agent(out["agent"])
    return out
