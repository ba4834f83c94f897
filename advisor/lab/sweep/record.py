"""The sweep directory: each task's parameters, state and result, so a sweep survives a crash,
a Ctrl-C or a failed task, and running the same command again runs only what is missing.

Layout (``OUT/sweep``): ``sweep.json`` lists every task (its id, readable parameters, state,
job and error); ``ID/task.pickle`` is what the job runs, ``ID/result.pickle`` what it returned
(``("ok", value)`` or ``("error", message)``), ``ID/stdout`` and ``ID/stderr`` its output (a
local run keeps the same record, without the job's files: ``local_run``). A
task's id is a hash of its function and parameters, so a changed grid gives new ids and the
old results stay where they are. The id covers the product's own files too
(``code_fingerprint``), so results recorded by another version are not taken for this one's.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import logging
import os
import pickle
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

PENDING, SUBMITTED, DONE, FAILED = "pending", "submitted", "done", "failed"
PRODUCT_PACKAGES = ("advisor", "plugins", "simulator")
log = logging.getLogger("htcondor_advisor.sweep")


class SweepError(Exception):
    """The sweep could not give every result (a user can fix it and run the same command)."""


def function_name(fn: Callable[..., Any]) -> str:
    """``module:name`` of a module-level function (what the job imports)."""
    return f"{fn.__module__}:{fn.__qualname__}"


def task_id(fn: Callable[..., Any], task: object) -> str:
    key = f"{function_name(fn)}|{code_fingerprint()}|{task!r}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the installed product (its sources, package data and compiled modules)."""
    roots = [Path(str(importlib.import_module(name).__file__)).parent for name in PRODUCT_PACKAGES]
    return files_digest(roots)


def files_digest(roots: Iterable[Path]) -> str:
    """The names and bytes of every file under ``roots``, bytecode caches aside."""
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def write_atomically(path: Path, data: bytes) -> None:
    part = path.with_name(path.name + ".part")
    part.write_bytes(data)
    os.replace(part, path)


class DataOnly(pickle.Unpickler):
    """Reads a result as data: containers, numbers, text and numpy arrays. A result comes back
    from an execute point, whose root can write any pickle, and unpickling a class of its choice
    would run its code as the researcher reading the sweep."""

    SAFE = frozenset(
        {
            *(("builtins", n) for n in ("dict", "list", "tuple", "set", "frozenset", "complex")),
            ("collections", "OrderedDict"),
            *(("numpy", n) for n in ("ndarray", "dtype")),
            *(
                (m, n)
                for m in ("numpy.core.multiarray", "numpy._core.multiarray")
                for n in ("_reconstruct", "scalar")
            ),
            ("numpy.core.numeric", "_frombuffer"),
            ("numpy._core.numeric", "_frombuffer"),
        }
    )

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self.SAFE or (module == "numpy.dtypes" and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"{module}.{name} is not data; the job that wrote it is suspect"
        )


@dataclass
class SweepRecord:
    """The tasks of one sweep in ``root``; ``entries`` follow the experiment's task order."""

    root: Path
    function: str
    ids: list[str]
    entries: dict[str, dict[str, Any]]

    @classmethod
    def open(cls, root: Path, fn: Callable[..., Any], tasks: Sequence[object]) -> SweepRecord:
        """The record of these tasks: earlier states kept, new tasks written out."""
        root.mkdir(parents=True, exist_ok=True)
        manifest = root / "sweep.json"
        known = {}
        if manifest.exists():
            try:
                known = {e["id"]: e for e in json.loads(manifest.read_text())["tasks"]}
            except (ValueError, KeyError, TypeError):  # damaged by hand: the results still count
                log.warning("%s is unreadable; its states are taken from the results", manifest)
        ids, entries = [], {}
        for task in tasks:
            tid = task_id(fn, task)
            ids.append(tid)
            folder = root / tid
            if not (folder / "task.pickle").exists():
                folder.mkdir(exist_ok=True)
                write_atomically(folder / "task.pickle", pickle.dumps((function_name(fn), task)))
            entries[tid] = known.get(tid, {"id": tid, "task": repr(task), "state": PENDING})
        record = cls(root, function_name(fn), ids, entries)
        for tid in ids:  # the result files are the truth (a job may end after its submitter)
            outcome = record.result(tid)
            if outcome is not None and outcome[0] == "ok":
                entries[tid]["state"] = DONE
            elif entries[tid]["state"] == DONE:
                entries[tid]["state"] = PENDING
        record.save()
        return record

    def save(self) -> None:
        body = {"function": self.function, "tasks": [self.entries[i] for i in self.ids]}
        write_atomically(self.root / "sweep.json", json.dumps(body, indent=1).encode())

    def missing(self) -> list[str]:
        """Tasks to submit: never run, failed, or lost (submitted by a run that ended)."""
        return [i for i in self.ids if self.entries[i]["state"] != DONE]

    def mark(self, tid: str, state: str, **details: str) -> None:
        """A task's new state, with only this state's details (its job, its error)."""
        old = self.entries[tid]
        self.entries[tid] = {"id": old["id"], "task": old["task"], "state": state, **details}
        self.save()

    def result(self, tid: str) -> tuple[str, Any] | None:
        """``("ok", value)`` or ``("error", message)`` as the job left it; None if absent."""
        path = self.root / tid / "result.pickle"
        if not path.exists():
            return None
        try:
            outcome: tuple[str, Any] = DataOnly(io.BytesIO(path.read_bytes())).load()
        except (pickle.UnpicklingError, EOFError, ValueError) as exc:
            return ("error", f"unreadable result.pickle ({exc})")
        return outcome

    def progress(self) -> str:
        done = sum(1 for e in self.entries.values() if e["state"] == DONE)
        return f"{done} of {len(self.ids)} tasks done"

    def stderr_tail(self, tid: str, lines: int = 5) -> str:
        path = self.root / tid / "stderr"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.rstrip().splitlines()[-lines:])

    def values(self) -> list[Any]:
        """Every task's value, in task order (all must be done)."""
        out = []
        for tid in self.ids:
            outcome = self.result(tid)
            assert outcome is not None and outcome[0] == "ok", tid
            out.append(outcome[1])
        return out
