"""The owner trace read ahead: when each machine's owner logs in next.

The pool uses it only to leave out sleep and eligibility timers that the owner's next login would
make stale (a third of all timers); the replay comes out the same without it, with more events.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.trace_model import OwnerSessions

INF = float("inf")


@dataclass(frozen=True)
class SessionPlan:
    """Sessions in the order the replay delivers their logins."""

    login: list[float]
    machine: list[int]
    next_login: list[float]
    """Per session, the same machine's following login (inf: none)."""
    first_login: list[float]
    """Per machine, its first login (inf: none)."""


def plan_sessions(sessions: OwnerSessions, machines: int) -> SessionPlan:
    delivered = np.argsort(sessions.login, kind="stable")
    login, machine = sessions.login[delivered], sessions.machine[delivered]
    by_machine = np.argsort(machine, kind="stable")  # each machine's sessions in order
    same = machine[by_machine[1:]] == machine[by_machine[:-1]]
    following = np.full(len(login), INF)
    following[by_machine[:-1][same]] = login[by_machine[1:][same]]
    first = by_machine[np.concatenate(([True], ~same))] if len(login) else by_machine
    first_login = [INF] * machines
    for m, t in zip(machine[first].tolist(), login[first].tolist(), strict=True):
        first_login[m] = t
    numbers = np.array(range(machines), dtype=object)  # one int object per machine
    return SessionPlan(login.tolist(), numbers[machine].tolist(), following.tolist(), first_login)
