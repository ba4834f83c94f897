"""Replicas as entries of the job book (paper 003 sec. 2.1): a replicable job advised
``replicas = N`` gets N - 1 extra entries (ids ``<job>#r<i>``) queued beside it, each a copy of its
job's columns; job_book.py says how they finish."""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulator.campus.job_states import PENDING, QUEUED, RUNNING

if TYPE_CHECKING:
    from simulator.campus.job_book import JobBook


def add_replicas(book: JobBook, j: int, count: int) -> None:
    """Queue ``count - 1`` replicas of job ``j`` beside it (it is unfinished)."""
    if book.status[j] not in (QUEUED, RUNNING):
        return
    now = book.engine.time
    book.family[j] = [j]
    for i in range(1, count):
        e = len(book.status)
        book.family[j].append(e)
        book.parent.append(j)
        book.ids.append(f"{book.ids[j]}#r{i}")
        book.replicable.append(False)
        for column, value in (
            (book.runtime, book.runtime[j]), (book.submit_t, book.submit_t[j]),
            (book.status, PENDING), (book.attempts, 0), (book.class_attempt_s, 0.0),
            (book.prior_class, 0), (book.good_wh, 0.0), (book.wasted_wh, 0.0),
            (book.finish, float("nan")), (book.machine, -1), (book.started, 0.0),
            (book.cpus, book.cpus[j]), (book.memory, book.memory[j]),
        ):  # fmt: skip
            column.append(value)  # type: ignore[arg-type]
        book._announce(e, now)
        book._enqueue(e)
