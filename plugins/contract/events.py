"""Canonical events (docs/architecture.md section 3): what a live pool or a replay tells a policy.

Times are float seconds since the Unix epoch (UTC); a machine is named by its HTCondor ``Machine``.
Events are frozen so a policy can keep them without copying.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


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


EVICTIONS = (AttemptOutcome.EVICTED_OWNER, AttemptOutcome.EVICTED_REBOOT)
"""The outcomes that put the job back in the idle queue."""


@dataclass(frozen=True, slots=True)
class OwnerSessionStarted:
    time: float
    machine: str


@dataclass(frozen=True, slots=True)
class OwnerSessionEnded:
    time: float
    machine: str


@dataclass(frozen=True, slots=True)
class MachinePowerChanged:
    time: float
    machine: str
    state: PowerState


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
    cpus: int = 1
    """The cores it requests (``RequestCpus``; 1, HTCondor's default, where the source does not
    say): what it takes of a partitionable machine (docs/slots.md)."""


@dataclass(frozen=True, slots=True)
class JobRemoved:
    """The user removed a job that was not running (a running one ends in ``AttemptEnded``)."""

    time: float
    job_id: str


@dataclass(frozen=True, slots=True)
class AttemptStarted:
    time: float
    job_id: str
    machine: str


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
