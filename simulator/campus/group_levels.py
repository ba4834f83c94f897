"""A class's ranking in grouped matching: the places an advice gives a group's machines per class,
the advice groups that share one rank, and their members listed once for uniform draws across many
groups (a computer bandit's untried machines)."""

from __future__ import annotations

from plugins.contract.advice import PRIOR_HOURS_CLASSES, MachineAdvice
from simulator.indexed_set import IndexedSet

Members = tuple[IndexedSet, IndexedSet]
"""A group's free members per family: awake, asleep."""
Places = tuple[float, ...] | list[float]
"""Per class k, the rank its jobs see on a group's machines; negative: they are kept off (a
list once a named advice was restated by class: ``AdviceGroups.rerank`` changes it in place)."""


class Level:
    """The groups sharing one rank for a class: their keys and members and, when a draw spans
    many groups, per family the level's members as one list of (machine, group place). A draw
    from it is uniform over the level's machines, as "ties at random" asks, in O(1); it is
    rebuilt once members were added anywhere (``generation``), and a drawn machine found taken
    leaves it."""

    __slots__ = ("built", "drawable", "keys", "sets")

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.sets: list[Members] = []
        self.drawable: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
        self.built = [-1, -1]

    def members(self, family: int, generation: int) -> list[tuple[int, int]]:
        if self.built[family] != generation:
            self.built[family] = generation
            sets = self.sets
            self.drawable[family][:] = [
                (m, i) for i, members in enumerate(sets) for m in members[family].items
            ]
        return self.drawable[family]


KEPT_OFF: Places = (-1.0,) * PRIOR_HOURS_CLASSES
"""The places of no group at all."""


def places_of(advice: MachineAdvice) -> Places:
    """Per class k, the rank its jobs see on machines of this advice (negative: kept off); a
    full row is its own places, so a re-ranked row costs no copy."""
    if advice.hold:
        return KEPT_OFF
    row, n = advice.rank_by_prior_hours, PRIOR_HOURS_CLASSES
    if row is None:
        return (advice.rank,) * n
    if len(row) == n:
        return row
    # as rank_for: a short row's last rank holds for the classes beyond it
    return row[:n] if len(row) > n else (*row, *(row[-1],) * (n - len(row)))
