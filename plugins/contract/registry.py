"""Find policies by name among the ``htcondor_advisor.policies`` entry points.

A site's own policy is a class in a package of its own, registered under this group
(docs/writing-a-policy.md). What can be wrong with such a package is said in one line naming the
entry point, its package and the fix, when the policy is chosen (``replay``, ``run``,
``check-config``): a name two packages register, an entry point that does not load, a class that
breaks the contract. ``policies`` lists the others and warns about each broken one, so one
site's mistake does not hide every policy.
"""

from __future__ import annotations

import difflib
import inspect
import logging
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from plugins.contract.option_pairs import option_text
from plugins.contract.policy import OptionError, Policy
from plugins.contract.raised import raised_at

GROUP = "htcondor_advisor.policies"
MODELS = {
    "campus": "the campus pool's negotiator (replay, the digital twin): machine advice, "
    "per-job minimum idle time and replicas, power advice",
    "dedicated": "a dedicated cluster's node power (train-power, experiment power-table)",
    "grid-queue": "a grid queue ordered by job priority (experiment utility-*)",
}
"""The models a policy can serve (``Policy.SERVES``): each acts on different advice."""
HOW_TO_REGISTER = (
    f"a policy of your own is an entry point in group {GROUP} of an installed package; after "
    "adding or renaming one, install the package again (pip install -e DIR); "
    "docs/writing-a-policy.md"
)
log = logging.getLogger("htcondor_advisor.policies")


class PolicyLoadError(OptionError):
    """A registered policy cannot be used as it is: the message names the policy, its entry
    point and package, what is wrong and the fix (shown as one line, as an option's error)."""


def registered() -> dict[str, EntryPoint]:
    """The registered entry points by name (not loaded yet)."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def available() -> dict[str, type[Policy]]:
    """Every registered policy class that can be used, by its entry-point name. Each one that
    cannot is left out with a warning saying why (``policy_class`` refuses it alike)."""
    named, claims = registered(), _claims()
    found = {}
    for name in named:
        try:
            found[name] = _resolve(name, named, claims)
        except PolicyLoadError as exc:
            log.warning("%s (left out)", exc)
    return found


def policy_class(name: str) -> type[Policy]:
    """The class registered as ``name``; the error lists what exists.

    Only that entry point is loaded: the others may import heavy libraries (scikit-learn takes
    about a second) that a replay of ``random`` never needs."""
    return _resolve(name, registered(), _claims())


def policy_for(name: str, model: str) -> type[Policy]:
    """The class registered as ``name`` if it can act in ``model``: elsewhere a policy's advice
    would be ignored (a replay would silently run as ``random``) or fail midway."""
    cls = policy_class(name)
    if model not in cls.SERVES:
        serves = " and ".join(sorted(cls.SERVES))
        plural = "s" if len(cls.SERVES) > 1 else ""
        fit = ", ".join(sorted(n for n, c in available().items() if model in c.SERVES))
        raise OptionError(
            f"policy {name!r} serves the {serves} model{plural}, not {model}; choose one of: {fit}"
        )
    return cls


def _resolve(name: str, named: dict[str, Any], claims: dict[str, list[str]]) -> type[Policy]:
    if name not in named:
        raise OptionError(_unknown(name, named))
    if name in claims:
        raise PolicyLoadError(
            f"policy {name!r} is registered by more than one package ({'; '.join(claims[name])}), "
            "so which one runs depends on the install order; rename the entry point in yours"
        )
    return _load(named[name])


def _unknown(name: str, named: Iterable[str]) -> str:
    known = sorted(named)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    if ":" in name:
        hint += "; a policy is chosen by its entry point's name, not by module:Class"
    listed = ", ".join(known) or "none (is the package installed?)"
    return f"unknown policy {name!r}{hint}; registered policies: {listed}; {HOW_TO_REGISTER}"


def _claims() -> dict[str, list[str]]:
    """The names more than one entry point registers, with where each points."""
    seen: dict[str, list[Any]] = {}
    for ep in entry_points(group=GROUP):
        seen.setdefault(ep.name, []).append(ep)
    where = {name: sorted({_origin(ep) for ep in eps}) for name, eps in seen.items() if eps[1:]}
    return {name: origins for name, origins in where.items() if len(origins) > 1}


def _origin(ep: Any) -> str:
    """``module:Class in package NAME VERSION``, as far as the entry point says."""
    value = getattr(ep, "value", None) or "?"
    dist = getattr(ep, "dist", None)
    if dist is None:
        return value
    return f"{value} in package {dist.name} {dist.version}"


def _load(ep: Any) -> type[Policy]:
    where = f"policy {ep.name!r} ({_origin(ep)})"
    try:
        cls = ep.load()
    except Exception as exc:
        at = raised_at(exc, outside=__file__)
        raise PolicyLoadError(
            f"{where} does not load: {type(exc).__name__}: {exc}{at}; fix the module, or the "
            "entry point and then install its package again"
        ) from None
    problem = _contract_problem(ep.name, cls)
    if problem:
        raise PolicyLoadError(f"{where}: {problem}")
    return cls


def _contract_problem(name: str, cls: Any) -> str | None:
    """What keeps a loaded entry point from running as a policy, with the fix; None: nothing."""
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        return (
            f"names {cls!r}, not a subclass of plugins.contract.policy.Policy; point the entry "
            "point at the policy class"
        )
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        return f"does not define {missing}; a policy answers through advise(self, view, now)"
    if name != cls.NAME:
        return (
            f"its class says NAME = {cls.NAME!r}; set NAME = {name!r}, the name its entry point "
            "registers (the daemon and the replay name it so: AdvisorPolicy, errors, summaries)"
        )
    unknown = sorted(set(cls.SERVES) - set(MODELS))
    if unknown or not cls.SERVES:
        return f"SERVES = {sorted(cls.SERVES)}; it must name some of: {', '.join(MODELS)}"
    if cls.observe is not Policy.observe and not cls.WANTS:
        return (
            "defines observe() but WANTS is empty, so no event ever reaches it; set WANTS to the "
            "event classes it learns from (plugins.contract.events), e.g. "
            "WANTS = frozenset({AttemptEnded})"
        )
    for key, opt in cls.OPTIONS.items():
        problem = _option_problem(opt)
        if problem:
            return f"option {key!r}: {problem}"
    return None


def _option_problem(opt: Any) -> str | None:
    """An option whose parser or default cannot work as ``--set`` and ``policies`` use them."""
    if opt.parse is bool:
        return (
            "parse=bool reads every text but '' as true (--set KEY=false would be true); parse "
            "true/false yourself, e.g. lambda text: text.lower() in ('1', 'true', 'yes', 'on')"
        )
    text = option_text(opt.default)
    try:
        back = opt.parse(text)
    except Exception as exc:
        return f"its parser refuses its own default as text, {text!r} ({exc})"
    try:
        differs = bool(back != opt.default)
    except Exception:  # values that compare element-wise (arrays): not checked
        differs = False
    if differs:
        return (
            f"the default {opt.default!r} reads back from its text {text!r} as {back!r}; give "
            "the default as the value its parser returns"
        )
    return None
