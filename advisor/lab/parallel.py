"""Independent replays and trainings side by side in worker processes, with one progress bar."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TypeVar

from advisor.lab.progress import terminal_bar

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    """One worker per core this process may use (the machine has 2; a laptop may have more)."""
    return max(1, len(os.sched_getaffinity(0)))


def run_parallel(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    *,
    workers: int | None = None,
    desc: str = "runs",
    progress: bool = True,
    each: Callable[[int, R], None] | None = None,
) -> list[R]:
    """``[fn(t) for t in tasks]`` in worker processes, results in task order.

    ``fn`` must be a module-level function (it is pickled by name). With one worker, or one task,
    everything runs in this process, which keeps tests and tracebacks simple. ``each(i, value)``
    is called here as each result arrives, so a caller can keep it before the others end. A
    failed task or a Ctrl-C stops the others at once.
    """
    workers = min(workers or default_workers(), len(tasks)) or 1
    bar = terminal_bar(total=len(tasks), wanted=progress, desc=desc, unit="run", leave=False)
    try:
        if workers == 1:
            results = []
            for i, task in enumerate(tasks):
                results.append(fn(task))
                if each is not None:
                    each(i, results[-1])
                bar.update()
            return results
        out: dict[int, R] = {}
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(fn, task): i for i, task in enumerate(tasks)}
            try:
                for future in as_completed(futures):
                    i = futures[future]
                    out[i] = future.result()
                    if each is not None:
                        each(i, out[i])
                    bar.update()
            except BaseException:  # a failed task or Ctrl-C: stop the tasks still running
                stop_workers(pool)
                raise
        return [out[i] for i in range(len(tasks))]
    finally:
        bar.close()


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the worker processes now, not after their current tasks (Python 3.14 has
    ``terminate_workers``; until then the executor's own list of them)."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
