"""The ``policy`` section of the daemon's configuration: the name, and each option checked as the
policy will parse it, with the agent file it names and the pool it needs (a policy that reads
the future runs only in a twin). ``config.py`` calls these with the other sections' checks."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from advisor.agent_files import missing_agent, shipped_names
from advisor.daemon import fields as f
from advisor.daemon.config_errors import FAILED, Problems
from advisor.daemon.pools import POOL_KINDS
from plugins.contract.policy import Option, OptionError, Policy, parse_options
from plugins.contract.registry import policy_class, policy_for


def check_policy(section: dict[str, Any], problems: Problems) -> None:
    """Check the options as the policy will parse them; ``section["options"]`` becomes what the
    policy is given (YAML scalars for options read from text become that text). A policy that
    failed has no options to check them against, nor do options that failed their type."""
    options = section["options"]
    if options is FAILED:
        return
    if not isinstance(options, dict):
        problems.add(f.fail("policy.options", "must be a mapping of option: value", options))
        return
    cls = FAILED if section["name"] is FAILED else problems.check(_policy, section["name"])
    if cls is FAILED:
        return
    given = {key: problems.check(_option, cls, key, value) for key, value in options.items()}
    if not any(value is FAILED for value in given.values()):
        problems.check(_parse_options, cls, given)
        agent_problem = relative_agent(given) or missing_agent(section["name"], given)
        if agent_problem:  # or-ppo: its trained weights
            problems.add(f.ConfigError(f"policy.options.agent: {agent_problem}"))
    section["options"] = given


def relative_agent(options: dict[Any, Any]) -> str | None:
    """An agent file named by a relative path: the daemon runs from / under systemd and from
    elsewhere in a shell, so the path would name two files (``state.directory`` alike)."""
    agent = options.get("agent")
    if not isinstance(agent, str) or agent in shipped_names() or agent in ("", "off"):
        return None
    if Path(agent).is_absolute():
        return None
    return (
        f"{agent!r} is a relative path, and the daemon runs from / under systemd; give the whole "
        f"path, e.g. {Path(agent).absolute()}"
    )


def check_pool_fit(name: Any, kind: str) -> None:
    """A twin runs the campus model, so its policy must serve it; a policy that reads the future
    (``crystal``, ``or-oracle``) runs only where there is one: a twin, or a replay of its model."""
    cls = _known(name)
    if cls is None:
        return
    simulated = POOL_KINDS[kind].simulated
    if simulated and "campus" not in cls.SERVES:
        try:
            policy_for(name, "campus")
        except OptionError as exc:
            raise f.ConfigError(f"policy.name: {exc} (a twin, kind: sim, is a campus)") from None
    if cls.NEEDS_ORACLE and not simulated:
        where = "a simulated pool (kind: sim)" if "campus" in cls.SERVES else "a replay"
        raise f.ConfigError(f"policy.name: {name!r} reads the future; only {where} can run it")


def check_idle_models(name: Any, learning: dict[str, Any]) -> None:
    """Stored idle-time models are for a policy that predicts idle times (``idle-*``)."""
    cls, store = _known(name), learning["idle_models"]
    if cls is not None and store not in (None, FAILED) and not cls.TAKES_IDLE_MODELS:
        raise f.ConfigError(
            f"learning.idle_models: policy {name!r} takes no idle-time models; an idle-* "
            "policy does (htcondor-advisor policies), or drop the key"
        )


def _known(name: Any) -> type[Policy] | None:
    """The class of a policy name; None where ``check_policy`` says what is wrong with it."""
    if name is FAILED:
        return None
    try:
        return policy_class(name)
    except (OptionError, ImportError):
        return None


def _policy(name: str) -> type[Policy]:
    try:
        return policy_class(name)
    except OptionError as exc:
        raise f.ConfigError(f"policy.name: {exc}") from None
    except ImportError as exc:
        raise f.ConfigError(
            f"policy.name: policy {name!r} is registered but does not load ({exc}); "
            "reinstall the package that provides it"
        ) from None


def _parse_options(cls: type[Policy], options: dict[Any, Any]) -> None:
    try:
        parse_options(cls, options)
    except OptionError as exc:
        raise f.ConfigError(f"policy.options: {exc}") from None
    except (TypeError, ValueError, ArithmeticError) as exc:  # a check that met the wrong type
        raise f.ConfigError(
            f"policy.options: policy {cls.NAME!r} cannot take {options!r} ({exc}); "
            "see htcondor-advisor policies for each option's values"
        ) from None


def _option(cls: type[Policy], key: Any, value: Any) -> Any:
    """An option's value as the policy gets it: text as written; a YAML number as its text, so
    the option's own parser checks it as it checks ``--set key=VALUE``; flags as they are."""
    opt: Option | None = cls.OPTIONS.get(key) if isinstance(key, str) else None
    if opt is None or isinstance(value, str):
        return value  # unknown options are parse_options' to name; text is parsed by the option
    path, default = f"policy.options.{key}", opt.default
    if isinstance(value, float) and not math.isfinite(value):
        raise f.fail(path, "must be a finite number", value)
    if isinstance(default, bool):  # 1/0 as --set takes it
        return (
            bool(value)
            if value in (0, 1) and not isinstance(value, float)
            else f.boolean(value, path)
        )
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
