"""A set of ints with O(1) add, discard and uniform random choice (free machines of a pool)."""

from __future__ import annotations

from collections.abc import Iterator, KeysView

import numpy as np


class IndexedSet:
    """Members kept in a list with a position map; removal swaps the last member into the hole."""

    __slots__ = ("_pos", "items", "live")

    def __init__(self) -> None:
        self.items: list[int] = []
        """The members in position order: read it (hot loops: no Python call), never change it."""
        self._pos: dict[int, int] = {}
        self.live: KeysView[int] = self._pos.keys()
        """The members as a live view: membership tests on it skip a Python call (hot loops)."""

    def add(self, item: int) -> None:
        pos = self._pos
        if item not in pos:
            pos[item] = len(self.items)
            self.items.append(item)

    def discard(self, item: int) -> None:
        pos = self._pos.pop(item, None)
        if pos is None:
            return
        items = self.items
        last = items.pop()
        if last != item:  # it sat elsewhere: the last member fills its hole
            items[pos] = last
            self._pos[last] = pos

    def __contains__(self, item: object) -> bool:
        return item in self._pos

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self.items))

    def sample(self, rng: np.random.Generator, count: int) -> list[int]:
        """Up to ``count`` distinct members chosen uniformly at random."""
        items, n = self.items, len(self.items)
        if count >= n:
            return [items[i] for i in rng.permutation(n).tolist()]
        return [items[i] for i in rng.choice(n, size=count, replace=False).tolist()]
