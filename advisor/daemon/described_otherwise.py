"""Machines the pool now describes otherwise than the daemon learned them.

The policies place a machine when it joins (a room's owner rates, a bandit's actions, an idle
model per room), and a restart joins the machines its snapshot describes before the pool is
asked. So a machine given an ``AdvisorCluster`` after the daemon first saw it, as
deploy/execute-point invites room by room, or another type, watts or cores, stays as it was in
the policy, and nothing said so. It is said now, once per machine, as soon as the pool shows it
(the source describes every machine anew at each poll, and the energy counted follows that).
"""

from __future__ import annotations

from collections.abc import Mapping

from plugins.contract.policy import MachineInfo

FIELDS = ("cluster", "mtype", "active_watts", "idle_watts", "sleep_watts", "jobs_at_once")
SHOWN = 3
"""Machines named in the line; the others are counted."""


def described_otherwise(
    known: Mapping[str, MachineInfo], seen: Mapping[str, MachineInfo], said: set[str]
) -> str | None:
    """One line for the machines of ``seen`` that ``known`` describes otherwise and that were
    not ``said`` yet (they are added), else None."""
    changes = []
    for name, info in seen.items():
        old = known.get(name)
        if old is None or old == info or name in said:
            continue
        said.add(name)
        fields = [f for f in FIELDS if getattr(old, f) != getattr(info, f)]
        changes.append(
            f"{name}: "
            + ", ".join(f"{f} {getattr(old, f)!r} -> {getattr(info, f)!r}" for f in fields)
        )
    if not changes:
        return None
    more = f"; and {len(changes) - SHOWN} more" if len(changes) > SHOWN else ""
    return (
        f"{len(changes)} machine(s) are now described otherwise than the policy learned them "
        f"({'; '.join(changes[:SHOWN])}{more}); the policy goes on with what it learned (the "
        "energy counted follows the pool): to learn them as they are, start the daemon on an "
        "empty state directory"
    )
