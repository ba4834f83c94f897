"""A class's ranking in grouped matching: the advice groups that share one rank, and their
members listed once for uniform draws across many groups (a computer bandit's untried machines)."""

from __future__ import annotations

from simulator.indexed_set import IndexedSet

Members = tuple[IndexedSet, IndexedSet]
"""A group's free members per family: awake, asleep."""


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
