"""Find policies by name among the ``htcondor_advisor.policies`` entry points."""

from __future__ import annotations

from importlib.metadata import entry_points

from plugins.policy import OptionError, Policy

GROUP = "htcondor_advisor.policies"


def available() -> dict[str, type[Policy]]:
    """Every registered policy class by its entry-point name."""
    found: dict[str, type[Policy]] = {}
    for ep in entry_points(group=GROUP):
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Policy)):
            raise TypeError(f"entry point {ep.name!r} in {GROUP} is not a Policy subclass: {cls!r}")
        found[ep.name] = cls
    return found


def policy_class(name: str) -> type[Policy]:
    """The class registered as ``name``; the error lists what exists."""
    registered = available()
    if name not in registered:
        known = ", ".join(sorted(registered)) or "none (is the package installed?)"
        raise OptionError(f"unknown policy {name!r}; registered policies: {known}")
    return registered[name]
