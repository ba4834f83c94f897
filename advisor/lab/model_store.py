"""Trained idle-time models on disk, with what they were trained on and by which libraries.

A store is a directory: ``meta.json`` (training window, feature list, options, library versions,
scores) and ``models.pkl`` (the fitted scikit-learn estimators). A pickle from another
scikit-learn version may load into something subtly different, so the version is checked from
``meta.json`` before anything is unpickled, and a mismatch is refused with the fix.
"""

from __future__ import annotations

import json
import pickle
import platform
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from plugins.idle.models import ModelPair

STORE_FORMAT = 1
META, MODELS = "meta.json", "models.pkl"


class ModelStoreError(ValueError):
    """A store is missing, damaged or from other library versions; the message says the fix."""


def library_versions() -> dict[str, str]:
    import sklearn  # only when models are saved or loaded: it costs a second of CLI start-up

    return {
        "scikit-learn": sklearn.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat()


def save_models(
    directory: Path,
    models: Mapping[str, ModelPair],
    *,
    window: tuple[float | None, float],
    features: tuple[str, ...],
    options: Mapping[str, Any],
    scores: Mapping[str, Any],
) -> Path:
    """Write the store; ``window`` is (first observation, training cut-off)."""
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": STORE_FORMAT,
        "libraries": library_versions(),
        "window": {"start": _iso(window[0]), "until": _iso(window[1]), "until_unix": window[1]},
        "features": list(features),
        "options": {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()},
        "groups": len(models),
        "samples": int(sum(p.samples for p in models.values())),
        "scores": scores,
    }
    with open(directory / MODELS, "wb") as fh:
        pickle.dump(dict(models), fh, protocol=pickle.HIGHEST_PROTOCOL)
    (directory / META).write_text(json.dumps(meta, indent=2))
    return directory


def read_meta(directory: Path) -> dict[str, Any]:
    path = directory / META
    if not path.is_file():
        raise ModelStoreError(
            f"{directory}: no {META}; train models with `htcondor-advisor train-idle`"
        )
    try:
        meta: dict[str, Any] = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ModelStoreError(
            f"{path}: not valid JSON ({exc}); retrain into a fresh --out"
        ) from None
    return meta


def load_models(directory: Path) -> tuple[dict[str, Any], dict[str, ModelPair]]:
    """(meta, models); refused before unpickling when scikit-learn's version differs."""
    meta = read_meta(directory)
    if meta.get("format") != STORE_FORMAT:
        raise ModelStoreError(
            f"{directory}: store format {meta.get('format')!r}, expected {STORE_FORMAT}; retrain"
        )
    trained = meta.get("libraries", {}).get("scikit-learn")
    running = library_versions()["scikit-learn"]
    if trained != running:
        raise ModelStoreError(
            f"{directory}: models were trained with scikit-learn {trained}, this is "
            f"{running}; retrain them with `htcondor-advisor train-idle` "
            f"(or install scikit-learn=={trained})"
        )
    with open(directory / MODELS, "rb") as fh:
        models: dict[str, ModelPair] = pickle.load(fh)
    return meta, models
