"""Advice types (docs/architecture.md section 3) and the ClassAd attributes they are published as.

Neutral values are the defaults, so "no advice" and "expired advice" mean the same thing:
the pool behaves as if the advisor did not exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

PRIOR_HOURS_CLASSES = 24
"""Jobs are classed by their longest earlier attempt in whole hours, 0..23 (paper 000, sec. 4)."""


WOKEN_UP_S = 3600.0
"""A machine woken from sleep is not put to sleep again for this long: its sleep advice waits
(HTCondor's manual, ``HIBERNATE_CHECK_INTERVAL``; the daemon keeps it: advisor/daemon/woken.py)."""


class PowerAdvice(StrEnum):
    ON = "on"
    MAY_SLEEP = "may-sleep"
    RESERVE_OFF = "reserve-off"
    WAKE = "wake"


@dataclass(frozen=True, slots=True)
class MachineAdvice:
    """Advice for one machine; a negative rank keeps jobs of that class off the machine."""

    rank: float = 0.0
    rank_by_prior_hours: tuple[float, ...] | None = None
    hold: bool = False
    predicted_idle_s: float | None = None
    power: PowerAdvice = PowerAdvice.ON
    expires: float | None = None
    """When this advice lapses; None means the driver's configured advice lifetime."""
    arm: str | None = None
    """With a control group, which arm's jobs the machine takes (``AdvisorControl``; the split
    of plugins/contract/machine_split.py); None: any job."""

    def rank_for(self, prior_hours: int) -> float:
        """``AdvisorRankByPriorHours[k]``, else ``AdvisorRank`` (as the shipped expressions)."""
        if self.rank_by_prior_hours is None:
            return self.rank
        return self.rank_by_prior_hours[min(prior_hours, len(self.rank_by_prior_hours) - 1)]


NEUTRAL_MACHINE_ADVICE = MachineAdvice()


def with_ranks(value: MachineAdvice, ranks: Mapping[int, float]) -> MachineAdvice:
    """``value`` with ``AdvisorRankByPriorHours[k]`` set to ``ranks[k]`` (``Advice.shared_ranks``);
    the other classes keep the ranks they had (``rank_for``)."""
    row = [ranks.get(k, value.rank_for(k)) for k in range(PRIOR_HOURS_CLASSES)]
    return replace(value, rank_by_prior_hours=tuple(row))


@dataclass(frozen=True, slots=True)
class JobAdvice:
    """Optional per-job advice (a schedd edit in a live pool; it persists until replaced).

    ``min_idle_s``: the job only matches machines whose ``AdvisorPredictedIdle`` is at least this.
    ``prio``: higher runs first among the jobs that can match (``JobPrio``).
    ``hold``: keep the job out of matchmaking.
    ``hold_until``: keep the job off every machine until then (``AdvisorHoldUntil``), counted as
    advice: neutral when the machines' advice lapsed, for a control job and past the starvation
    bound, so it never keeps a job waiting longer than the bound would.
    ``needs_hours``: rank the job in the prior-hours class of at least this many hours
    (``AdvisorNeedsHours``; its class is the greater of this and its own longest attempt): what
    the job's batch showed it needs. None: its own class.
    """

    hold: bool = False
    hold_until: float | None = None
    min_idle_s: float | None = None
    needs_hours: int | None = None
    prio: float = 0.0
    replicas: int = 1
    utility: float | None = None
    """The job's expected time utility (paper 002, eq. 1-3) if started now; shown by explain."""


@dataclass(frozen=True, slots=True)
class GroupAdvice:
    """Per accounting group: its configured share, the service it has received (both fractions
    of the pool) and the negotiator priority factor that would move it towards its share (a
    higher factor means a worse priority, as in HTCondor)."""

    share: float
    received: float
    priority_factor: float


@dataclass(slots=True)
class Advice:
    """One round of advice: per machine, per-job updates and per accounting group.

    Machines advised alike (a bandit's cluster) may instead *follow* a named advice: ``shared``
    states the names' values this round, ``follows`` says which machines carry which name from
    now on. Changing a name's value then re-advises all its followers at once, as an advice
    endpoint does that resolves the name when each machine's hook pulls. A machine named in
    ``machines`` stops following; a follow otherwise stands, so a machine whose view says it
    follows a name needs no answer to go on following it (while the names lapse it is neutral).

    A name already stated may instead be restated by class in ``shared_ranks``: per name, the
    classes k whose ``AdvisorRankByPriorHours[k]`` changed and the new ranks. A bandit's decision
    moves one class's ranks on a few names, so this costs a consumer a few ranks rather than a
    new row per name. A consumer applies ``shared_ranks`` before ``shared`` and ignores a name it
    was never told in full (a fresh daemon): the name's followers state it in full as they follow.
    """

    machines: dict[str, MachineAdvice] = field(default_factory=dict)
    jobs: dict[str, JobAdvice] = field(default_factory=dict)
    groups: dict[str, GroupAdvice] = field(default_factory=dict)
    shared: dict[str, MachineAdvice] = field(default_factory=dict)
    shared_ranks: dict[str, dict[int, float]] = field(default_factory=dict)
    follows: dict[str, str] = field(default_factory=dict)
    shared_until: float | None = None
    """When every named advice stated so far lapses unless a later round renews it (None: when
    the last round said). Names lapse together, so a policy renews them all with one time rather
    than restating each one; their values carry no ``expires`` of their own."""
