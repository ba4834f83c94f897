"""The daemon's two ports: the pool it observes and the places it publishes advice to.

A live HTCondor pool (``advisor/condor``) and the digital twin (the simulator in accelerated time)
both implement ``PoolSource``; the HTTP endpoint, the collector merge and the twin's negotiator
implement ``AdviceSink``. The policy host only sees these two protocols.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from plugins.contract.advice import Advice
from plugins.contract.events import Event
from plugins.contract.policy import MachineInfo, PoolView


@dataclass
class Observation:
    """What one poll of the pool saw: new events, the pool now, and the machines known so far."""

    events: Sequence[Event]
    """New since the previous poll, in time order."""
    view: PoolView
    """Candidate machines (free or asleep) and the idle queue by prior-hours class."""
    machines: Mapping[str, MachineInfo] = field(default_factory=dict)
    """Inventory as known now; grows as machines appear."""
    healthy: bool = True
    """False when the collector or every schedd did not answer (advice then expires)."""
    unanswered: tuple[str, ...] = ()
    """Schedds that did not answer while others did; the view keeps their last known queue."""


class PoolSource(Protocol):
    """Where events come from; resumable after a restart through its cursor."""

    def poll(self, now: float) -> Observation:
        """Everything new since the previous poll, as of ``now``."""
        ...

    def cursor(self) -> dict[str, Any]:
        """Where to resume (JSON-compatible; saved in every snapshot)."""
        ...

    def restore(self, cursor: Mapping[str, Any]) -> None:
        """Resume from what ``cursor`` returned before a restart."""
        ...


@runtime_checkable
class LabelledSink(Protocol):
    """A sink that writes the policy's label (``AdvisorPolicy``) itself: a reload that changes
    the policy gives it the new one."""

    policy: str


class AdviceSink(Protocol):
    """Where advice goes; ``publish`` raises on failure, which the daemon counts and logs."""

    name: str

    def publish(self, advice: Advice, now: float) -> None:
        """Make ``advice`` (already stamped with its expiry) visible to the pool."""
        ...


class SinkRefused(Exception):
    """The pool refused what a sink sent for a reason its administrator fixes (an identity
    without the right, a missing configuration fragment): the message says what and how, and
    the daemon logs it as one line, not a traceback."""


@contextmanager
def refused_as(what: str, fix: str) -> Iterator[None]:
    """A call to the bindings inside becomes ``SinkRefused`` when it fails: what was not done,
    the bindings' reason, and what the administrator changes."""
    try:
        yield
    except Exception as error:  # (the bindings raise their own classes, all Exception)
        raise SinkRefused(f"{what}: {error}; {fix}") from error
