"""``--executor local``: the missing tasks of a sweep in local worker processes, each result
kept in the sweep directory as it arrives. A crash, a Ctrl-C or a stopped session then loses only
the replays that were running, and the same command runs only what is missing (docs/sweeps.md).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from advisor.lab.parallel import run_parallel
from advisor.lab.sweep.record import DONE, SweepError, SweepRecord, write_atomically


def run_locally(
    fn: Callable[[Any], Any],
    tasks: Sequence[Any],
    root: Path,
    workers: int | None,
    desc: str,
) -> list[Any]:
    """``[fn(t) for t in tasks]``, each task without a result run here; recorded in ``root``."""
    record = SweepRecord.open(root, fn, tasks)
    todo = list(dict.fromkeys(record.missing()))
    total = len(set(record.ids))
    if len(todo) < total:
        print(f"{total - len(todo)} of {total} tasks done earlier ({root}); running {len(todo)}")
    task_of = dict(zip(record.ids, tasks, strict=True))

    def keep(index: int, value: Any) -> None:
        tid = todo[index]
        write_atomically(root / tid / "result.pickle", pickle.dumps(("ok", value)))
        record.mark(tid, DONE)

    try:
        if todo:
            run_parallel(fn, [task_of[tid] for tid in todo], workers=workers, desc=desc, each=keep)
    except KeyboardInterrupt:
        raise SweepError(f"interrupted; {record.progress()}: run the same command again") from None
    return record.values()
