"""``train-power``'s checkpoints: the or-ppo agent's weights, Adam state and run metadata in one
``.npz``, written atomically so a stopped run resumes and ``power-table`` can load any of them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from advisor.agent_files import AGENT_FILE, read_npz
from plugins.power.ppo import Adam, Params


def checkpoint_path(out: str, workload: str) -> Path:
    return Path(out) / f"or-ppo-{workload}.npz"


def best_path(out: str, workload: str) -> Path:
    """The agent chosen on validation days (the one to ship)."""
    return Path(out) / f"or-ppo-{workload}-best.npz"


def shipped_path(out: str, workload: str) -> Path:
    """The validation-chosen agent when the run kept one, else the last checkpoint."""
    best = best_path(out, workload)
    return best if best.exists() else checkpoint_path(out, workload)


def agent_file(out: str, workload: str) -> Path:
    """The chosen agent's weights and training record alone: what ``or-ppo agent=PATH`` reads
    and what is shipped (``advisor/power_agents``)."""
    return Path(out) / AGENT_FILE.format(workload)


def save_checkpoint(path: Path, params: Params, opt: Adam, meta: dict[str, Any]) -> None:
    """Weights, Adam moments and the run's progress, replaced atomically."""
    arrays = {f"m_{k}": v for k, v in opt.m.items()} | {f"v_{k}": v for k, v in opt.v.items()}
    _save(path, params, arrays, meta | {"adam_t": opt.t})


def export_agent(out: str, workload: str, record: dict[str, Any]) -> Path:
    """The validation-chosen agent (else the last checkpoint) without its optimiser state, with
    ``record`` (log, cluster, observation layout, command, validation figures)."""
    params, _, meta = load_checkpoint(shipped_path(out, workload))
    chosen = meta.get("selected", f"iteration {meta['iteration']}")
    path = agent_file(out, workload)
    _save(path, params, {}, record | {"selected": chosen})
    return path


def _save(path: Path, params: Params, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """``p_`` weights, other arrays and a JSON meta in one ``.npz``, replaced atomically."""
    arrays = {f"p_{k}": v for k, v in params.items()} | arrays
    tmp = path.with_suffix(".tmp.npz")
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(tmp, **arrays)  # type: ignore[arg-type]  # numpy stubs mistype **kwds
    os.replace(tmp, path)


def load_checkpoint(path: Path) -> tuple[Params, dict[str, Any], dict[str, Any]]:
    """Weights, Adam state and metadata of a checkpoint written by ``save_checkpoint``."""
    groups, meta = read_npz(path)
    adam = {"t": meta["adam_t"], "m": groups.get("m", {}), "v": groups.get("v", {})}
    return groups["p"], adam, meta
