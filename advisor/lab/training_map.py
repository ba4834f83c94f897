"""Parallel maps handed to learning policies (``PolicyContext.parallel_map``).

``process_map`` fits in worker processes with a progress bar, one BLAS thread each (two workers
on two cores, not four threads fighting). ``cached_map`` remembers results on disk by the hash of
the task: replays of several ensembles on one trace see the same owner history, so they fit the
very same models and only the first one pays for it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from advisor.lab.parallel import run_parallel

Map = Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]


def _single_threaded(fn: Callable[[Any], Any], task: Any) -> Any:
    with threadpool_limits(limits=1):
        return fn(task)


def process_map(workers: int | None = None, progress: bool = True) -> Map:
    def run(fn: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
        work = functools.partial(_single_threaded, fn)
        return run_parallel(work, list(tasks), workers=workers, desc="fit", progress=progress)

    return run


def cached_map(inner: Map, directory: Path) -> Map:
    """``inner`` for tasks not seen before; earlier results are read back from ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)

    def run(fn: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
        salt = f"{fn.__module__}.{fn.__qualname__}/{version('scikit-learn')}".encode()
        keys = [hashlib.sha256(salt + pickle.dumps(t)).hexdigest() for t in tasks]
        missing = [i for i, key in enumerate(keys) if not (directory / key).exists()]
        for i, result in zip(missing, inner(fn, [tasks[i] for i in missing]), strict=True):
            tmp = directory / f"{keys[i]}.{os.getpid()}.tmp"  # replays may share a cache
            tmp.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
            tmp.replace(directory / keys[i])
        return [pickle.loads((directory / key).read_bytes()) for key in keys]

    return run
