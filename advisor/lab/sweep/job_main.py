"""What a sweep's HTCondor job runs on the execute point: ``python -m
advisor.lab.sweep.job_main task.pickle result.pickle``.

It imports the task's function by name from the same installation as the submitter (the shared
environment of ``docs/sweeps.md``), runs it, and always leaves ``result.pickle`` (the value, or
the error in one line) so HTCondor transfers an answer back even when the task failed; the
traceback goes to the job's stderr and the exit code says which it was.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import traceback
from pathlib import Path


def main(task_path: str, result_path: str) -> int:
    name, task = pickle.loads(Path(task_path).read_bytes())
    module, _, function = name.partition(":")
    try:
        value = getattr(importlib.import_module(module), function)(task)
        outcome, code = ("ok", value), 0
    except Exception as exc:  # the task's own failure, reported by the submitter
        traceback.print_exc()
        outcome, code = ("error", f"{type(exc).__name__}: {exc}"), 1
    Path(result_path).write_bytes(pickle.dumps(outcome))
    return code


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
