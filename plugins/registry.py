"""Find policies by name among the ``htcondor_advisor.policies`` entry points."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from plugins.policy import OptionError, Policy

GROUP = "htcondor_advisor.policies"


def available() -> dict[str, type[Policy]]:
    """Every registered policy class by its entry-point name."""
    return {ep.name: _load(ep) for ep in entry_points(group=GROUP)}


def _load(ep: EntryPoint) -> type[Policy]:
    cls = ep.load()
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise TypeError(f"entry point {ep.name!r} in {GROUP} is not a Policy subclass: {cls!r}")
    return cls


def policy_class(name: str) -> type[Policy]:
    """The class registered as ``name``; the error lists what exists.

    An entry point of that name is loaded alone: the others may import heavy libraries
    (scikit-learn takes about a second) that a replay of ``random`` never needs."""
    named = [ep for ep in entry_points(group=GROUP) if ep.name == name]
    if named:
        return _load(named[-1])  # the last one wins, as in ``available``
    registered = available()
    if name not in registered:
        known = ", ".join(sorted(registered)) or "none (is the package installed?)"
        raise OptionError(f"unknown policy {name!r}; registered policies: {known}")
    return registered[name]
