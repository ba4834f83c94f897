"""Find policies by name among the ``htcondor_advisor.policies`` entry points."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from plugins.contract.policy import OptionError, Policy

GROUP = "htcondor_advisor.policies"
MODELS = {
    "campus": "the campus pool's negotiator (replay, the digital twin): machine advice, "
    "per-job minimum idle time and replicas, power advice",
    "dedicated": "a dedicated cluster's node power (train-power, experiment power-table)",
    "grid-queue": "a grid queue ordered by job priority (experiment utility-*)",
}
"""The models a policy can serve (``Policy.SERVES``): each acts on different advice."""


def registered() -> dict[str, EntryPoint]:
    """The registered entry points by name (not loaded yet)."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def available() -> dict[str, type[Policy]]:
    """Every registered policy class by its entry-point name."""
    return {name: _load(ep) for name, ep in registered().items()}


def _load(ep: EntryPoint) -> type[Policy]:
    cls = ep.load()
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise TypeError(f"entry point {ep.name!r} in {GROUP} is not a Policy subclass: {cls!r}")
    return cls


def policy_class(name: str) -> type[Policy]:
    """The class registered as ``name``; the error lists what exists.

    Only that entry point is loaded: the others may import heavy libraries (scikit-learn takes
    about a second) that a replay of ``random`` never needs."""
    named = registered()
    if name not in named:
        known = ", ".join(sorted(named)) or "none (is the package installed?)"
        raise OptionError(f"unknown policy {name!r}; registered policies: {known}")
    return _load(named[name])


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
