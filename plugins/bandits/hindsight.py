"""Free-machine tracking for the "stayed queued" outcomes of eq. 4 (paper 000, sec. 4).

A queue decision at ``t0`` was bad when some machine free at ``t0`` stayed free until ``t0 + d``
(``d`` the job's execution time, known once it completes elsewhere). Free periods are contiguous,
so that holds exactly when the machine free longest at ``t0 + d`` has been free since ``t0`` or
earlier. ``oldest(t)`` only changes when the longest-free machine is taken, so its whole history is
a short step function: every queue decision is judged with one binary search, however many
machines were free at the time and however many jobs share the decision. Machines are kept in the
order they became free, so the longest-free one is always the first.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

INF = float("inf")


class FreeMachines:
    """Machines free for jobs now (awake or asleep), grouped by action (numbered 0..groups-1),
    with ``oldest`` history."""

    def __init__(self, group_of: Callable[[str], int], groups: int) -> None:
        self.group_of = group_of
        self.since: dict[str, float] = {}
        """Free machines in the order they became free (``since`` ascending)."""
        self.members: list[set[str]] = [set() for _ in range(groups)]
        """The free machines of each group."""
        self._occupied = bytearray(groups)
        self.occupied = np.frombuffer(self._occupied, dtype=np.bool_)
        """Whether a group has a free machine, as one array (a decision takes its groups from
        it); a view of ``_occupied``, which the events update at plain-int cost."""
        self._oldest = INF
        self._newest = -INF
        self._times = array("d")
        self._values = array("d")

    def __contains__(self, machine: str) -> bool:
        return machine in self.since

    def free(self, machine: str, now: float) -> None:
        """The machine became a candidate for jobs (idempotent while it stays free)."""
        self.free_all((machine,), now)

    def free_all(self, machines: Iterable[str], now: float) -> bool:
        """``free`` for each machine, in one call (a round frees many): whether any of them was
        not free yet."""
        since, members, group_of, occupied = self.since, self.members, self.group_of, self._occupied
        freed = False
        for machine in machines:
            if machine in since:
                continue
            freed = True
            since[machine] = now
            group = group_of(machine)
            members[group].add(machine)
            occupied[group] = 1
        if not freed:
            return False
        if now < self._newest:  # a clock that went back: restore the order (sort is stable)
            self.since = dict(sorted(since.items(), key=lambda item: item[1]))
        else:
            self._newest = now
        if self._oldest == INF:
            self._record(now, now)
        return True

    def take(self, machine: str, now: float) -> None:
        """The machine stopped being free (a job or its owner took it, or it went down)."""
        freed_at = self.since.pop(machine, None)
        if freed_at is None:
            return
        group = self.group_of(machine)
        members = self.members[group]
        members.discard(machine)
        if not members:
            self._occupied[group] = 0
        if freed_at > self._oldest:
            return  # a machine free longer is still free
        oldest = self.since[next(iter(self.since))] if self.since else INF
        if oldest != self._oldest:
            self._record(now, oldest)

    def _record(self, now: float, oldest: float) -> None:
        self._oldest = oldest
        self._times.append(now)
        self._values.append(oldest)

    def add_groups(self, count: int) -> None:
        """``count`` more groups, none with a free machine yet (new actions of a growing pool)."""
        if count <= 0:
            return
        self.members.extend(set() for _ in range(count))
        self._occupied = self._occupied + bytearray(count)  # a new buffer: the old one is viewed
        self.occupied = np.frombuffer(self._occupied, dtype=np.bool_)

    def positions(self, only_free: bool, as_list: bool) -> np.ndarray | list[int]:
        """The groups a decision chooses among, in order: those with a free machine
        (``only_free``) or all; a list for a few groups (decided on in plain Python)."""
        if as_list:
            occupied = self._occupied  # by index: mypyc cannot compile enumerate() of a bytearray
            return [g for g in range(len(occupied)) if occupied[g] or not only_free]
        return self.occupied.nonzero()[0] if only_free else np.arange(len(self._occupied))

    def stayed_free(self, t0: float, until: float) -> bool:
        """Was some machine free at ``t0`` still free (the same free period) at ``until``?"""
        i = bisect_right(self._times, until) - 1
        return i >= 0 and self._values[i] <= t0

    def state_dict(self, judged_from: float) -> dict[str, Any]:
        """The free machines and the ``oldest`` history still needed for decisions made at
        ``judged_from`` or later (older steps can no longer be asked about)."""
        first = max(bisect_right(self._times, judged_from) - 1, 0)
        return {
            "since": sorted(self.since.items()),
            "oldest": self._oldest,
            "times": self._times[first:].tolist(),
            "values": self._values[first:].tolist(),
        }

    def load_state(self, saved: dict[str, Any]) -> None:
        freed = sorted(((str(m), float(t)) for m, t in saved["since"]), key=lambda item: item[1])
        self.since, self.members = dict(freed), [set() for _ in self.members]
        self._newest = freed[-1][1] if freed else -INF
        self.occupied[:] = False  # in place: the view stays
        for machine, _ in freed:
            group = self.group_of(machine)
            self.members[group].add(machine)
            self._occupied[group] = 1
        self._oldest = float(saved["oldest"])
        self._times = array("d", saved["times"])
        self._values = array("d", saved["values"])
