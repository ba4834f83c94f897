"""In-memory traces: inventory, owner sessions, HTC jobs and unavailability, as numpy columns.

Columns rather than objects keep a full campus year (1.2 M sessions, 0.5 M jobs) small and fast.
Readers in ``simulator.traces`` and the scenario generator build these; the replay consumes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

DAY = 86400.0
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
EPOCH_WEEKDAY = 3
"""1970-01-01 was a Thursday (index 3 with Monday = 0)."""


def weekday(t: float) -> int:
    """Day of week of a UTC time, Monday = 0."""
    return int((t // DAY + EPOCH_WEEKDAY) % 7)


@dataclass(frozen=True, slots=True)
class OpeningHours:
    """Per weekday (Monday first) the open interval in seconds of the day, or None when closed."""

    days: tuple[tuple[float, float] | None, ...]

    @classmethod
    def always(cls) -> OpeningHours:
        return cls(days=((0.0, DAY),) * 7)

    def is_open(self, t: float) -> bool:
        span = self.days[weekday(t)]
        if span is None:
            return False
        sod = t % DAY
        return span[0] <= sod < span[1]


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    hours: OpeningHours


@dataclass(frozen=True, slots=True)
class MachineSpec:
    """A machine of the inventory with its power per state (watts) and cores."""

    name: str
    cluster: str
    mtype: str
    cores: int
    active_watts: float
    idle_watts: float
    sleep_watts: float


@dataclass(slots=True)
class Inventory:
    clusters: dict[str, Cluster]
    machines: list[MachineSpec]

    def index(self) -> dict[str, int]:
        return {m.name: i for i, m in enumerate(self.machines)}


@dataclass(slots=True)
class OwnerSessions:
    """Owner sessions sorted by login: ``machine`` indexes ``Inventory.machines``."""

    login: np.ndarray
    machine: np.ndarray
    logout: np.ndarray

    def __len__(self) -> int:
        return len(self.login)

    @classmethod
    def empty(cls) -> OwnerSessions:
        return cls(np.empty(0), np.empty(0, dtype=np.int32), np.empty(0))


@dataclass(slots=True)
class Jobs:
    """HTC jobs sorted by submit time; ``remove`` is +inf for jobs that finish on their own.

    ``remove`` is when the user removes a job that never finishes; a job with a finite ``remove``
    and ``runtime`` is removed at ``remove`` if it has not completed by then.
    """

    job_id: list[str]
    user: list[str]
    submit: np.ndarray
    runtime: np.ndarray
    remove: np.ndarray
    replicable: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))

    def __post_init__(self) -> None:
        if len(self.replicable) != len(self.submit):
            self.replicable = np.zeros(len(self.submit), dtype=bool)

    def __len__(self) -> int:
        return len(self.submit)

    def never_finishes(self) -> np.ndarray:
        return ~np.isfinite(self.runtime)


@dataclass(slots=True)
class Unavailability:
    """Intervals in which a machine is down (FTA), ``machine`` indexes the inventory."""

    machine: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def empty(cls) -> Unavailability:
        return cls(np.empty(0, dtype=np.int32), np.empty(0), np.empty(0))


@dataclass(slots=True)
class Trace:
    """Everything one replay needs; ``start``/``end`` bound the simulated period."""

    inventory: Inventory
    owners: OwnerSessions
    jobs: Jobs
    start: float
    end: float
    unavailability: Unavailability = field(default_factory=Unavailability.empty)
    terms: list[tuple[float, float]] = field(default_factory=list)
    """Teaching terms as (start, end) times; used by idle-time features (paper 004)."""
