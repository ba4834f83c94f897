"""The files a configuration names that only the lab can read: an idle-time model store
(``learning.idle_models``) and a twin's campus description (``pool.scenario_config``).

``check_host`` (the service's room) sees that they exist; this reads them as ``run`` will load
them, so ``check-config`` refuses what ``run`` would, with the key named: a store's models must
also fit the configured policy's options (``model_store.fits``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from advisor.daemon.config import DaemonConfig
from advisor.daemon.config_errors import FAILED, Problems
from advisor.daemon.fields import ConfigError
from advisor.lab.model_store import ModelStoreError, fits, same_reboots, usable_meta
from plugins.contract.policy import OptionError, parse_options
from plugins.contract.registry import policy_class
from plugins.idle.policy import IdlePolicy
from simulator.campus.scenario import load_campus_config


def check_inputs(config: DaemonConfig) -> None:
    """Every error of both files at once, one located line each."""
    problems = Problems()
    store = config.learning["idle_models"]
    if store not in (None, FAILED):
        problems.check(_store, store, _idle_options(config.policy), config.pool["reboot_hour"])
    campus = config.pool.get("scenario_config")
    if config.simulated and campus not in (None, FAILED):
        problems.check(_campus, campus)
    problems.raise_any()


def _idle_options(section: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The idle policy's name and every option it will run with (defaults included); None where
    the ``policy`` section's own checks already said what is wrong with it."""
    name, given = section["name"], section["options"]
    if name is FAILED or not isinstance(given, dict) or any(v is FAILED for v in given.values()):
        return None
    try:
        cls = policy_class(name)
        return (name, parse_options(cls, given)) if issubclass(cls, IdlePolicy) else None
    except (OptionError, ImportError, TypeError, ValueError):
        return None


def _store(
    directory: Path, policy: tuple[str, dict[str, Any]] | None, reboot_hour: float | None
) -> None:
    try:
        meta = usable_meta(directory)
        if policy is not None:
            fits(directory, meta, policy[1], policy[0])
        if reboot_hour is not FAILED:
            same_reboots(directory, meta, reboot_hour)
    except ModelStoreError as exc:
        raise ConfigError(f"learning.idle_models: {exc}") from None


def _campus(path: Path) -> None:
    try:
        load_campus_config(path)
    except ConfigError as exc:
        raise ConfigError(f"pool.scenario_config: {exc}") from None
