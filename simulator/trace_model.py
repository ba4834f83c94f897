"""In-memory traces: inventory, owner sessions, HTC jobs and unavailability, as numpy columns.

Columns rather than objects keep a full campus year (1.2 M sessions, 0.5 M jobs) small and fast.
Readers in ``simulator.traces`` and the scenario generator build these; the replay consumes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from plugins.contract.clock import DAY, EPOCH_WEEKDAY

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


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


def scan_closing(days: tuple[tuple[float, float] | None, ...], t: float, tries: int = 8) -> float:
    """The first time >= t at which a room with these weekly ``days`` is closed (t if closed now).

    Walks open spans day by day, giving up (inf) after ``tries`` days: a room open round the clock
    never closes."""
    probe = t
    for _ in range(tries):
        day = probe // DAY
        span = days[int((day + EPOCH_WEEKDAY) % 7)]
        sod = probe - day * DAY
        if span is None or not (span[0] <= sod < span[1]):
            return probe
        probe = day * DAY + span[1]
    return float("inf")


class ClosingTimes:
    """``scan_closing`` for one room, memoised per day.

    A replay asks for the next closing time at every idle transition (11 k times a simulated day);
    the answer only depends on the day and on whether ``t`` falls inside that day's open span, so
    each day's span and the closing time after it are worked out once, by ``scan_closing`` itself
    (same arithmetic, same result to the bit).
    """

    __slots__ = ("_by_day", "_days", "_span")

    def __init__(self, hours: OpeningHours) -> None:
        self._days = hours.days
        self._by_day: dict[float, tuple[float, float, float, float]] = {}
        self._span = (0.0, 0.0, 0.0, 0.0)
        """The day entry whose open span held the last time asked about: most questions fall in
        it again. Same test as on the day's own entry (``t - midnight`` is exact near the span)."""

    def next_closing(self, t: float) -> float:
        """The first time >= t at which the room is closed (t itself when closed now)."""
        midnight, opens, closes, closing = self._span
        if opens <= t - midnight < closes:
            return closing
        day = t // DAY
        entry = self._by_day.get(day)
        if entry is None:
            entry = self._by_day[day] = self._day_entry(day)
        midnight, opens, closes, closing = entry
        sod = t - midnight
        if opens <= sod < closes:
            self._span = entry
            return closing
        return t

    def _day_entry(self, day: float) -> tuple[float, float, float, float]:
        """(midnight, open from, open until, closing time after the span); a closed day never
        matches its empty span."""
        midnight = day * DAY
        span = self._days[int((day + EPOCH_WEEKDAY) % 7)]
        if span is None:
            return midnight, 0.0, 0.0, midnight
        return midnight, span[0], span[1], scan_closing(self._days, midnight + span[1], 7)


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    hours: OpeningHours


SINGLE, PARTITIONABLE = "single", "partitionable"
SLOT_LAYOUTS = (SINGLE, PARTITIONABLE)
"""How a machine takes jobs (docs/slots.md): ``single``, one job at a time whatever it requests
(the papers' model); ``partitionable``, one partitionable slot whose cores and memory jobs share
(HTCondor's default since 23.x)."""
DEFAULT_CPUS = 1
"""``RequestCpus`` of a job whose trace does not say (HTCondor 25's ``JOB_DEFAULT_REQUESTCPUS``)."""
DEFAULT_MEMORY_MB = 128.0
"""``RequestMemory`` of a job whose trace does not say (HTCondor 25's
``JOB_DEFAULT_REQUESTMEMORY``)."""


@dataclass(frozen=True, slots=True)
class MachineSpec:
    """A machine of the inventory with its power per state (watts), cores, memory and slots."""

    name: str
    cluster: str
    mtype: str
    cores: int
    active_watts: float
    idle_watts: float
    sleep_watts: float
    memory_mb: float = math.inf
    """Memory its jobs may share, in MB (inf: memory never limits)."""
    slots: str = SINGLE

    @property
    def jobs_at_once(self) -> int:
        """One-core jobs it runs at once (``MachineInfo.jobs_at_once``)."""
        return self.cores if self.slots == PARTITIONABLE else 1


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
    cpus: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    """Cores each job requests (``DEFAULT_CPUS`` where the trace does not say)."""
    memory_mb: np.ndarray = field(default_factory=lambda: np.empty(0))
    """Memory each job requests in MB (``DEFAULT_MEMORY_MB`` where the trace does not say)."""

    def __post_init__(self) -> None:
        n = len(self.submit)
        if len(self.replicable) != n:
            self.replicable = np.zeros(n, dtype=bool)
        if len(self.cpus) != n:
            self.cpus = np.full(n, DEFAULT_CPUS, dtype=np.int64)
        if len(self.memory_mb) != n:
            self.memory_mb = np.full(n, DEFAULT_MEMORY_MB)

    def requests_defaults(self) -> bool:
        """Every job requests one core and the default memory (a trace written without them)."""
        return bool(
            (self.cpus == DEFAULT_CPUS).all() and (self.memory_mb == DEFAULT_MEMORY_MB).all()
        )

    def __len__(self) -> int:
        return len(self.submit)

    def subset(self, keep: np.ndarray) -> Jobs:
        """The jobs where ``keep`` (a boolean mask) is true, still in submit order."""
        kept = np.flatnonzero(keep)
        return Jobs(
            [self.job_id[i] for i in kept],
            [self.user[i] for i in kept],
            self.submit[keep],
            self.runtime[keep],
            self.remove[keep],
            self.replicable[keep],
            self.cpus[keep],
            self.memory_mb[keep],
        )

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
