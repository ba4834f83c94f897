"""Trained idle-time models on disk, with what they were trained on and by which libraries.

A store is a directory: ``meta.json`` (training window, feature list, options, library versions,
scores) and ``models.pkl`` (the fitted scikit-learn estimators). The library versions are kept
because a pickle from another scikit-learn may load into something subtly different: whoever
unpickles the models (a notebook, a later warm start) checks them first. The options that shape
the models are kept for the same reason: a policy of other ones cannot use them (``fits``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import platform
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from plugins.contract.policy import Policy
from plugins.idle.policy import IdlePolicy

if TYPE_CHECKING:
    from plugins.idle.models import ModelPair

log = logging.getLogger("htcondor_advisor.models")
STORE_FORMAT = 1
META, MODELS = "meta.json", "models.pkl"


class ModelStoreError(ValueError):
    """A store is missing, damaged, from other library versions or for other policy options; the
    message says the fix."""


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
    reboot_hour: float | None,
) -> Path:
    """Write the store; ``window`` is (first observation, training cut-off); ``reboot_hour``
    the nightly reboot the training cut every idle period at (None: none)."""
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
        "reboot_hour": reboot_hour,
    }
    pickled = pickle.dumps(dict(models), protocol=pickle.HIGHEST_PROTOCOL)
    meta["models_sha256"] = hashlib.sha256(pickled).hexdigest()
    _write_whole(directory / MODELS, pickled)  # a training stopped on the way leaves the old
    _write_whole(directory / META, json.dumps(meta, indent=2).encode())  # meta: a mismatch
    return directory


def _write_whole(path: Path, data: bytes) -> None:
    """``data`` at ``path`` whole or not at all (a daemon may read the store as it starts)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


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


RETRAIN = "retrain with `htcondor-advisor train-idle` into this --out"
WITHOUT_STORE = (
    "its models are not loaded: the policy refits its own from its journal where it had any,"
    " else advises neutrally until its first retraining"
)


def usable_meta(directory: Path) -> dict[str, Any]:
    """A store's meta, once its format is this install's (another is refused)."""
    meta = read_meta(directory)
    if meta.get("format") != STORE_FORMAT:
        raise ModelStoreError(f"{directory}: a store of format {meta.get('format')!r}; {RETRAIN}")
    return meta


def other_libraries(directory: Path, meta: dict[str, Any]) -> str | None:
    """Why the store's pickled models may not load here, if they may not: trained with other
    versions of scikit-learn or numpy (an upgrade of the host's packages)."""
    theirs, ours = meta.get("libraries", {}), library_versions()
    for library in ("scikit-learn", "numpy"):
        if theirs.get(library) != ours[library]:
            return (
                f"{directory}: trained with {library} {theirs.get(library)}, this is "
                f"{ours[library]}; {RETRAIN}"
            )
    return None


SHAPING = ("features", "group")
"""The options a store's models are made for: ``features`` are the columns each model takes, in
order (others raise a shape error at every advice), ``group`` their keys (others match no machine:
neutral advice). The ensemble rule, ``delta_min`` and the training budget change how the models
were fitted, not whether a policy can use them (``install`` starts every rule from the average)."""


def _shown(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _difference(key: str, theirs: str, ours: str, default: bool) -> str:
    said = f"policy.options.{key} is {ours}{' (the default)' if default else ''}"
    if key == "features":
        return f"the store's models take features {theirs} but {said}"
    return f"the store has one model per {theirs} but {said}"


def same_reboots(directory: Path, meta: Mapping[str, Any], reboot_hour: float | None) -> None:
    """Refuse a store trained for other nightly reboots than ``pool.reboot_hour``: its models
    learned that every idle period ends at the reboot (hours short every evening on a pool
    that does not reboot). A store of an earlier version records none: not refused."""
    if "reboot_hour" not in meta or meta["reboot_hour"] == reboot_hour:
        return
    hour = "none" if reboot_hour is None else f"{reboot_hour:g}"
    raise ModelStoreError(
        f"{directory}: trained on machines that reboot {_reboots(meta['reboot_hour'])}, "
        f"pool.reboot_hour says they reboot {_reboots(reboot_hour)}; train again with "
        f"`htcondor-advisor train-idle ... --reboot-hour {hour} --out {directory}`"
    )


def _reboots(hour: float | None) -> str:
    return "never" if hour is None else f"at {int(hour):02d}:{round(hour % 1 * 60):02d} UTC"


def fits(directory: Path, meta: Mapping[str, Any], options: Mapping[str, Any], policy: str) -> None:
    """Refuse a store whose models ``policy`` with ``options`` (all of them, defaults included)
    cannot use. Every store ``train-idle`` wrote records both; one that does not was made or
    edited by hand, and whether its models fit is unknown, so it is refused too."""
    recorded = meta.get("options")
    theirs = {
        "features": meta.get("features"),
        "group": recorded.get("group") if isinstance(recorded, dict) else None,
    }
    ours = {key: _shown(options[key]) for key in SHAPING}
    sets = " ".join(f"--set {key}={ours[key]}" for key in SHAPING)
    train = f"`htcondor-advisor train-idle ... --policy {policy} {sets} --out {directory}`"
    missing = [key for key in SHAPING if theirs[key] is None]
    if missing:
        raise ModelStoreError(
            f"{directory}: the store records no {', '.join(missing)} (it predates this check, or "
            f"its {META} was edited), so whether its models fit policy.options is unknown; "
            f"train it again with {train}"
        )
    differ = [key for key in SHAPING if _shown(theirs[key]) != ours[key]]
    if not differ:
        return
    defaults = IdlePolicy.OPTIONS
    said = "; ".join(
        _difference(k, _shown(theirs[k]), ours[k], ours[k] == _shown(defaults[k].default))
        for k in differ
    )
    store = " and ".join(f"{key}: {_shown(theirs[key])}" for key in differ)
    raise ModelStoreError(
        f"{directory}: {said}; train again with {train}, or set policy.options {store} "
        "(the store's)"
    )


def load_models(directory: Path) -> tuple[dict[str, ModelPair], float]:
    """The models of a store and when their training data ends (``usable_meta``), trained with
    this install's libraries."""
    meta = usable_meta(directory)
    other = other_libraries(directory, meta)
    if other is not None:
        raise ModelStoreError(other)
    try:
        pickled = (directory / MODELS).read_bytes()
        recorded = meta.get("models_sha256")  # (a store written before it was kept has none)
        if recorded is not None and hashlib.sha256(pickled).hexdigest() != recorded:
            said = f"its {MODELS} is not the one its {META} describes (a training stopped)"
            raise ModelStoreError(f"{directory}: {said}; {RETRAIN}")
        models = pickle.loads(pickled)
        until = float(meta["window"]["until_unix"])
    except (OSError, EOFError, KeyError, TypeError, pickle.UnpicklingError) as exc:
        raise ModelStoreError(f"{directory}: unreadable ({exc}); {RETRAIN}") from None
    return dict(models), until


def warm_start(policy: Policy, directory: Path | None) -> None:
    """Install a store's models (``learning.idle_models``). A live idle policy otherwise serves
    neutral advice until its first retraining, up to a month away (after a restart it refits
    the models it had at once, on the history relearned from its journal: ``relearn``)."""
    if directory is None:
        return
    assert isinstance(policy, IdlePolicy), "check_config allows the key for idle-* only"
    try:  # check_inputs refused what it could at start; this is for any other caller
        meta = usable_meta(directory)
        fits(directory, meta, policy.options, policy.NAME)
        same_reboots(directory, meta, policy.context.reboot_hour)
        other = other_libraries(directory, meta)
        if other is not None:  # a routine upgrade must not stop the daemon: it goes on without
            log.warning("learning.idle_models: %s; %s", other, WITHOUT_STORE)
            return
        models, until = load_models(directory)
    except ModelStoreError as exc:
        raise ModelStoreError(f"learning.idle_models: {exc}") from None
    policy.install(models, until)
    log.info(
        "%s starts from the models of %s (trained until %s): %s",
        policy.label,
        directory,
        _iso(until),
        policy.coverage(),
    )
