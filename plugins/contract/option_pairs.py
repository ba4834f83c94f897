"""Policy options as a user types them: ``--set key=value`` pairs in, a value as that text out.

Commands, the daemon's command line and the experiments all read ``--set``; ``policies`` shows
each default in the same form, so what it prints can be pasted back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from plugins.contract.policy import OptionError


def parse_sets(pairs: list[str] | None) -> dict[str, str]:
    """``--set key=value`` pairs as a dict (values are parsed by the policy's options)."""
    options: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise OptionError(f"--set {pair!r}: expected key=value, e.g. --set epsilon=0.1")
        options[key.strip()] = value.strip()
    return options


SWITCH_ON, SWITCH_OFF = ("on", "true", "yes", "1"), ("off", "false", "no", "0")
"""The words a switch takes, in any case: one vocabulary for every policy's switches, so a
user need not know whether a policy calls its own true/false or on/off."""
SWITCH_WORDS = ", ".join(f"{on}/{off}" for on, off in zip(SWITCH_ON, SWITCH_OFF, strict=True))


def parse_switch(text: str) -> bool:
    """A switch's word as a user types it; anything else is an error naming every word taken."""
    word = text.strip().lower()
    if word in SWITCH_ON or word in SWITCH_OFF:
        return word in SWITCH_ON
    raise ValueError(f"must be a switch: {SWITCH_WORDS}")


def option_text(value: Any) -> str:
    """``value`` as the text an option's parser reads back: ``off`` for None (the parsers of the
    optional variants read it), true/false, comma-separated lists and ``k=v`` maps, and a
    dataclass as its own ``str`` or else its fields joined by ``:`` (``last:500``), trailing
    fields left out while they hold their default (``within-hour``)."""
    if value is None:
        return "off"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return ",".join(f"{k}={option_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ",".join(option_text(v) for v in value)
    if isinstance(value, set | frozenset):
        return ",".join(sorted(option_text(v) for v in value))
    if dataclasses.is_dataclass(value) and type(value).__str__ is object.__str__:
        fields = [(getattr(value, f.name), f.default) for f in dataclasses.fields(value)]
        while len(fields) > 1 and fields[-1][0] == fields[-1][1]:
            fields.pop()
        return ":".join(option_text(v) for v, _ in fields)
    return str(value)
