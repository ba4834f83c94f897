"""``train-power``'s checkpoints: the or-ppo agent's weights, Adam state and run metadata in one
``.npz``, written atomically so a stopped run resumes and ``power-table`` can load any of them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

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


def save_checkpoint(path: Path, params: Params, opt: Adam, meta: dict[str, Any]) -> None:
    """Weights, Adam moments and the run's progress, replaced atomically."""
    arrays = {f"p_{k}": v for k, v in params.items()}
    arrays |= {f"m_{k}": v for k, v in opt.m.items()} | {f"v_{k}": v for k, v in opt.v.items()}
    tmp = path.with_suffix(".tmp.npz")
    arrays["meta"] = np.array(json.dumps(meta | {"adam_t": opt.t}))
    np.savez(tmp, **arrays)  # type: ignore[arg-type]  # numpy stubs mistype **kwds
    os.replace(tmp, path)


def load_checkpoint(path: Path) -> tuple[Params, dict[str, Any], dict[str, Any]]:
    """Weights, Adam state and metadata of a checkpoint written by ``save_checkpoint``."""
    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        pick = lambda prefix: {k[2:]: data[k] for k in data.files if k.startswith(prefix)}  # noqa: E731
        params, adam = pick("p_"), {"t": meta["adam_t"], "m": pick("m_"), "v": pick("v_")}
    return params, adam, meta
