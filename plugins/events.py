"""Canonical events (DESIGN section 3): what a live pool or a trace replay tells a policy.

Times are float seconds since the Unix epoch (UTC); a machine is named by its HTCondor ``Machine``.
Events are frozen so a policy can keep them without copying.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from enum import StrEnum
from typing import Any, TypeVar

E = TypeVar("E")


def _direct_init(cls: type[E]) -> type[E]:
    """Give a frozen slots dataclass an ``__init__`` that fills each slot through its descriptor.

    The generated one calls ``object.__setattr__`` per field, about half the cost of building an
    event; a replay builds millions. Same signature and defaults; the class is otherwise untouched
    (still frozen, same equality, hash and repr)."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    scope: dict[str, Any] = {f"_set_{n}": getattr(cls, n).__set__ for n in names}
    params = []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default is MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
    body = "".join(f"\n    _set_{n}(self, {n})" for n in names)
    exec(f"def __init__(self, {', '.join(params)}):{body}", scope)
    init, generated = scope["__init__"], vars(cls)["__init__"]
    init.__qualname__, init.__annotations__ = generated.__qualname__, generated.__annotations__
    setattr(cls, "__init__", init)  # noqa: B010 (mypy refuses cls.__init__ = ...)
    return cls


class PowerState(StrEnum):
    """Power states a machine reports (``rebooted`` marks the instant of a reboot)."""

    ON = "on"
    SLEEP = "sleep"
    OFF = "off"
    BOOTING = "booting"
    REBOOTED = "rebooted"


class AttemptOutcome(StrEnum):
    """Why an attempt ended; only ``COMPLETED`` yields good energy."""

    COMPLETED = "completed"
    EVICTED_OWNER = "evicted-owner"
    EVICTED_REBOOT = "evicted-reboot"
    REMOVED = "removed"
    HELD = "held"


@_direct_init
@dataclass(frozen=True, slots=True)
class OwnerSessionStarted:
    time: float
    machine: str


@_direct_init
@dataclass(frozen=True, slots=True)
class OwnerSessionEnded:
    time: float
    machine: str


@_direct_init
@dataclass(frozen=True, slots=True)
class MachinePowerChanged:
    time: float
    machine: str
    state: PowerState


@_direct_init
@dataclass(frozen=True, slots=True)
class JobQueued:
    """A job entered (or re-entered) the idle queue with what is known at that moment."""

    time: float
    job_id: str
    user: str
    prior_attempts: int = 0
    longest_prior_attempt_s: float = 0.0
    group: str = ""
    """The job's accounting group (VO); empty when the pool has none."""
    expected_runtime_s: float | None = None
    """The submitter's execution-time estimate, when the pool or trace gives one."""
    replicable: bool = False
    """The job may run as several replicas (``JobAdvice.replicas``, paper 003)."""


@_direct_init
@dataclass(frozen=True, slots=True)
class JobRemoved:
    """The user removed a job that was not running (a running one ends in ``AttemptEnded``)."""

    time: float
    job_id: str


@_direct_init
@dataclass(frozen=True, slots=True)
class AttemptStarted:
    time: float
    job_id: str
    machine: str


@_direct_init
@dataclass(frozen=True, slots=True)
class AttemptEnded:
    time: float
    job_id: str
    machine: str
    outcome: AttemptOutcome
    started: float
    active_watts: float = 0.0


Event = (
    OwnerSessionStarted
    | OwnerSessionEnded
    | MachinePowerChanged
    | JobQueued
    | JobRemoved
    | AttemptStarted
    | AttemptEnded
)

ALL_EVENT_KINDS: frozenset[type] = frozenset(
    {
        OwnerSessionStarted,
        OwnerSessionEnded,
        MachinePowerChanged,
        JobQueued,
        JobRemoved,
        AttemptStarted,
        AttemptEnded,
    }
)

ALL_POWER_STATES: frozenset[PowerState] = frozenset(PowerState)
