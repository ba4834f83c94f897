"""The files a configuration names that only the lab can read: an idle-time model store
(``learning.idle_models``) and a twin's campus description (``pool.scenario_config``).

``check_host`` (the service's room) sees that they exist; this reads them as ``run`` will load
them, so ``check-config`` refuses what ``run`` would, with the key named.
"""

from __future__ import annotations

from pathlib import Path

from advisor.daemon.config import DaemonConfig
from advisor.daemon.config_errors import FAILED, Problems
from advisor.daemon.fields import ConfigError
from advisor.lab.model_store import ModelStoreError, usable_meta
from simulator.campus.scenario import load_campus_config


def check_inputs(config: DaemonConfig) -> None:
    """Every error of both files at once, one located line each."""
    problems = Problems()
    store = config.learning["idle_models"]
    if store not in (None, FAILED):
        problems.check(_store, store)
    campus = config.pool.get("scenario_config")
    if config.simulated and campus not in (None, FAILED):
        problems.check(_campus, campus)
    problems.raise_any()


def _store(directory: Path) -> None:
    try:
        usable_meta(directory)
    except ModelStoreError as exc:
        raise ConfigError(f"learning.idle_models: {exc}") from None


def _campus(path: Path) -> None:
    try:
        load_campus_config(path)
    except ConfigError as exc:
        raise ConfigError(f"pool.scenario_config: {exc}") from None
