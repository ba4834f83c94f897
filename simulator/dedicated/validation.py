"""Choosing the shipped ``or-ppo`` agent on validation days carved out of the training days.

Every ``stride``-th training day (a fixed choice, never a test day) is held out of cloning,
DAgger and PPO; candidates (each warm-start round, then every few PPO iterations) are played
greedily on those days, and the agent kept is the one wasting least there among those that keep
the issue's bounds on the same days: no more waste and no more on-off cycles per node than T(0).
The test days are never loaded here: only ``load_days``' training half is indexed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from plugins.contract.policy import PolicyContext
from plugins.power.or_ppo import OrPpoPolicy
from plugins.power.ppo import Params
from plugins.power.timeout import TimeoutPolicy
from simulator.dedicated.catalog import ClusterLog, load_days
from simulator.dedicated.days import Day
from simulator.dedicated.episode import DayEpisode, DayMetrics


def validation_split(train: list[Day], stride: int) -> tuple[list[int], list[int]]:
    """Positions in ``train`` to fit on and to validate on: positions stride-1, 2*stride-1, ...
    validate (0: none, everything fits)."""
    positions = list(range(len(train)))
    if stride <= 0:
        return positions, []
    return [p for p in positions if p % stride != stride - 1], positions[stride - 1 :: stride]


@dataclass(frozen=True)
class Score:
    """Totals over the validation days."""

    waste_kj: float
    cycles_per_node: float
    delay_s: float
    unstarted: int

    def within(self, bound: Score) -> bool:
        """The issue's bounds against T(0): no more waste and no more on-off cycles."""
        return self.waste_kj <= bound.waste_kj and self.cycles_per_node <= bound.cycles_per_node


def play_training_day(task: tuple[ClusterLog, int, Params | None]) -> DayMetrics:
    """One training day (by position) under the greedy agent ``params``, or T(0) for None."""
    log, position, params = task
    train, _ = load_days(log)
    if params is None:
        policy: Any = TimeoutPolicy(PolicyContext({}), {"t": 0.0})
    else:
        policy = OrPpoPolicy(PolicyContext({}, seed=position), {"agent": {"params": params}})
    return DayEpisode(train[position].jobs).run(policy)


Mapper = Callable[[Callable[[Any], DayMetrics], list[Any]], Iterable[DayMetrics]]


def score(mapper: Mapper, log: ClusterLog, positions: list[int], params: Params | None) -> Score:
    """Totals of waste, cycles, mean delay and unstarted jobs over the validation days."""
    tasks = [(log, p, params) for p in positions]
    days = list(mapper(play_training_day, tasks))
    return Score(
        waste_kj=sum(d.waste_kj for d in days),
        cycles_per_node=sum(d.cycles_per_node for d in days),
        delay_s=sum(d.delay_s for d in days) / max(1, len(days)),
        unstarted=sum(d.unstarted for d in days),
    )


class Selector:
    """Keeps the admissible candidate with the lowest validation waste (the first candidate
    stands in while none is admissible); its state lives in the checkpoint's metadata."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state
        self.bound = Score(**state["t0"])

    def offer(self, label: str, candidate: Score) -> bool:
        """Records ``candidate``; True when it becomes the one to ship."""
        row = {"label": label, **asdict(candidate), "admissible": candidate.within(self.bound)}
        self.state.setdefault("history", []).append(row)
        best = self.state.get("best")
        better = best is None or (
            (row["admissible"], -candidate.waste_kj) > (best["admissible"], -best["waste_kj"])
        )
        if better:
            self.state["best"] = row
        return better
