"""The daemon's calls to the collector and the schedds, made in a child process with a deadline.

The ``htcondor2`` bindings hold the GIL while they wait on the network, so one call to a daemon
that accepts and never answers froze the whole advisor: the advice endpoint the hooks read, the
metrics, the snapshots and the signal handlers (a schedd query gives up after 20 s, a collector
query after ``QUERY_TIMEOUT``, 60 s, and a job edit never: docs/live-daemon.md). Here every call
runs in one child process; the daemon waits on a pipe, which releases the GIL, for at most
``deadline_s``. A call past its deadline kills the child (the next call starts another) and
raises ``TimeoutError``, which the daemon handles as any other pool failure; the caller names the
daemon (``schedd S did not answer (no answer within 30 s, pool.call_timeout_s)``). HTCondor's
adstash bounds its schedd queries the same way, with a process pool.

Handles are described by picklable specs, so the child makes its own ``Collector`` and
``Schedd`` objects; ClassAds pickle, and history iterators are read to the end in the child. A
history's ``since`` is always an expression here, handed to the bindings as an ``ExprTree``:
before 25.0.8 and 25.7.2 (HTCONDOR-3435) they took a string only as ``cluster.proc``.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any

Spec = tuple[Any, ...]
"""``("collector", address, token)`` or ``("schedd", location ClassAd)``."""


def handle(htcondor2: Any, spec: Spec) -> Any:
    """The bindings object ``spec`` describes (in the child)."""
    if spec[0] == "collector":
        _, address, token = spec
        context = htcondor2.SecurityContext(token=token) if token else None
        return htcondor2.Collector(address, context) if context else htcondor2.Collector(address)
    return htcondor2.Schedd(spec[1])


def serve(conn: Connection, params: Mapping[str, str]) -> None:
    """The child's loop: apply ``params``, then answer (spec, method, args, kwargs) requests
    with ("ok", result) or ("error", message) until the pipe closes."""
    import classad2
    import htcondor2

    for key, value in params.items():
        htcondor2.param[key] = value
    while True:
        try:
            spec, method, args, kwargs = conn.recv()
        except EOFError:
            return
        if isinstance(kwargs.get("since"), str):  # (ExprTrees do not pickle; made here)
            kwargs["since"] = classad2.ExprTree(kwargs["since"])
        try:
            result = getattr(handle(htcondor2, spec), method)(*args, **kwargs)
            if method == "jobEpochHistory":  # an iterator over the schedd's reply
                result = list(result)
            conn.send(("ok", result))
        except Exception as error:  # the bindings raise their own classes, all Exception
            conn.send(("error", f"{error}"))


class BoundedCalls:
    """One child process doing the calls; ``call`` waits at most ``deadline_s``."""

    def __init__(self, deadline_s: float, params: Mapping[str, str] | None = None) -> None:
        self.deadline_s = deadline_s
        self.params = dict(params or {})
        self._lock = threading.Lock()
        self._child: Any = None
        self._conn: Connection | None = None

    def _started(self) -> Connection:
        if self._conn is None:
            context = multiprocessing.get_context("spawn")  # no fork of a threaded daemon
            ours, theirs = context.Pipe()
            self._child = context.Process(
                target=serve, args=(theirs, self.params), name="htcondor-calls", daemon=True
            )
            self._child.start()
            theirs.close()
            self._conn = ours
        return self._conn

    def stop(self) -> None:
        """End the child (the next call starts another)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._child is not None:
            self._child.kill()
            self._child.join()
            self._child = None

    def call(self, spec: Spec, method: str, *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)`` of the handle ``spec``. Raises ``TimeoutError`` past the
        deadline, ``RuntimeError`` for the bindings' own errors (their message kept)."""
        with self._lock:
            conn = self._started()
            try:
                conn.send((spec, method, args, kwargs))
                reply = conn.recv() if conn.poll(self.deadline_s) else None
            except (OSError, EOFError):  # the child died (killed, out of memory): a new one next
                self.stop()
                raise RuntimeError("the process making the call ended") from None
            if reply is None:
                self.stop()
                raise TimeoutError(f"no answer within {self.deadline_s:g} s, pool.call_timeout_s")
        status, value = reply
        if status == "error":
            raise RuntimeError(value)
        return value


class RemoteCollector:
    """``htcondor2.Collector``'s calls the daemon makes, through ``calls``."""

    def __init__(self, calls: BoundedCalls, address: str, token: str | None = None) -> None:
        self.calls = calls
        self.spec: Spec = ("collector", address, token)

    def query(self, ad_type: Any, projection: list[str]) -> list[Any]:
        return self.calls.call(self.spec, "query", ad_type, projection=projection)

    def locate(self, daemon_type: Any, name: str) -> Any:
        return self.calls.call(self.spec, "locate", daemon_type, name)

    def advertise(self, ads: list[Any], command: str) -> None:
        self.calls.call(self.spec, "advertise", ads, command)


class RemoteSchedd:
    """``htcondor2.Schedd``'s calls the daemon makes, through ``calls``."""

    def __init__(self, calls: BoundedCalls, location: Any) -> None:
        self.calls = calls
        self.spec: Spec = ("schedd", location)

    def query(self, constraint: str, projection: list[str]) -> list[Any]:
        return self.calls.call(self.spec, "query", constraint, projection)

    def edit(self, jobs: list[str], attr: str, value: str) -> None:
        self.calls.call(self.spec, "edit", jobs, attr, value)

    def jobEpochHistory(self, projection: list[str], since: str | None) -> list[Any]:
        return self.calls.call(self.spec, "jobEpochHistory", projection=projection, since=since)

    def history(self, constraint: str, projection: list[str], since: str) -> list[Any]:
        return self.calls.call(self.spec, "history", constraint, projection, since=since)
