"""The oldest idle job of each prior-hours class, as a heap: the order both matchmakers take
jobs in (oldest first, as a schedd offers its queue)."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import compress

from plugins.contract.advice import PRIOR_HOURS_CLASSES
from simulator.campus.group_levels import Level
from simulator.campus.job_book import JobBook


def oldest_heads(
    book: JobBook, levels: Callable[[int], list[Level]] | None = None
) -> list[tuple[float, int]]:
    """(submit time, class) of the oldest job of each class with jobs waiting, oldest first;
    with ``levels``, only of the classes that some advice group takes; only jobs submitted
    before the next unadvised job waiting (``unadvised.interleave``)."""
    heads = []
    before = book.unadvised.before
    for k in compress(range(PRIOR_HOURS_CLASSES), book.queued_by_class):  # those waiting
        if levels is not None and not levels(k):
            continue  # e.g. a class a bandit keeps queued
        head = book.head(k)
        if head is not None and head < before:
            heads.append((head[0], k))
    heapq.heapify(heads)
    return heads


def advance(book: JobBook, heads: list[tuple[float, int]], k: int) -> None:
    """Class ``k``'s head was taken: its next job takes its place (or the class leaves)."""
    nxt = book.head(k)
    if nxt is not None and nxt >= book.unadvised.before:
        nxt = None  # an unadvised job waiting is older: its turn comes first
    if heads[0][1] != k:  # a younger class's head (a leftover claim skips the oldest)
        i = next(i for i, (_, c) in enumerate(heads) if c == k)
        heads[i] = heads[-1] if nxt is None else (nxt[0], k)
        if nxt is None:
            heads.pop()
        heapq.heapify(heads)
    elif nxt is None:
        heapq.heappop(heads)
    else:
        heapq.heapreplace(heads, (nxt[0], k))
