"""One eq. 6 draw of a placement bandit for a prior-hours class, and the ranks it publishes.

The draw and the ranks are apart because the ranks need to know how many jobs a cycle can start
at most, which is only known once every class has drawn: the idle jobs of the classes that run
somewhere (a class left queued starts none), plus one per exploring job.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np

from plugins.bandits.agent import BanditAgent, Positions, Values
from plugins.bandits.hindsight import FreeMachines

QUEUE = "<queue>"
FEW_ACTIONS = 8
"""Up to this many actions (the system level's one), a draw runs on Python lists. From about ten,
numpy's vector speed makes up for its cost per call (at the 37 clusters, lists were no faster)."""
GREEDY_RANK = 4.0
"""The greedy action's rank, above every estimate's (2 + q' <= 3)."""


class Draw(NamedTuple):
    """Class k's eq. 6 draw over the available actions (``positions``) and "stay queued"."""

    state: Hashable
    choice: str
    greedy: str
    explored: bool
    probe: str | None
    """When exploring an action, the one free machine of it the exploring job goes to."""
    values: Values
    """q'(s, a) of the available actions (NaN: untried, not valued)."""
    positions: Positions
    floor: float | None
    """q'(s, stay queued)."""

    @property
    def runs(self) -> bool:
        """Whether the draw sends class-k jobs to machines (neither choice nor greedy queues)."""
        return QUEUE not in (self.choice, self.greedy)


def draw(
    agent: BanditAgent,
    free: FreeMachines,
    actions: Sequence[str],
    state: Hashable,
    positions: Positions,
    rng: np.random.Generator,
) -> Draw:
    """Eq. 6 over the actions at ``positions`` (available now) and "stay queued"; an exploring
    draw also picks the one free machine of the explored action."""
    floor = agent.value(state, QUEUE)
    with_queue = agent.values_at(state, positions, np.nan if floor is None else floor)
    values = with_queue[:-1]
    chosen, explored, best = agent.choose_among(state, with_queue, rng, True)
    n = len(positions)
    choice = QUEUE if chosen == n else actions[positions[chosen]]
    greedy = QUEUE if best == n else actions[positions[best]]
    probe = None
    if explored and choice != QUEUE:
        members = sorted(free.members[int(positions[chosen])])
        probe = members[int(rng.integers(len(members)))] if members else None
    return Draw(state, choice, greedy, explored, probe, values, positions, floor)


def ranks(drawn: Draw, actions: Sequence[str], demand: int) -> dict[str, float]:
    """The ranks per action for class k (absent: -1, keeps class-k jobs off): the greedy
    action on top, then rank 2 + q'(s, a) (in [1, 3]: rewards lie in [-1, 1]) for the
    available actions the estimates prefer to queueing. Only the best ``demand`` of them (ties
    included) are ranked: a cycle starts no more jobs than that, the rest could not be reached."""
    if not drawn.runs:
        return {}
    if isinstance(drawn.values, list):
        return _ranks_of_few(drawn, actions, demand)
    values, positions, floor = drawn.values, np.asarray(drawn.positions), drawn.floor
    # as places: cheaper than two boolean subscripts when few are better (most decisions)
    better = (values > floor if floor is not None else ~np.isnan(values)).nonzero()[0]
    if not better.size:  # only the greedy action beats queueing (2 in 5 decisions)
        return {drawn.greedy: GREEDY_RANK}
    values, positions = values[better], positions[better]
    if len(values) > demand > 0:
        reached = values >= -np.partition(-values, demand - 1)[demand - 1]
        values, positions = values[reached], positions[reached]
    column = {actions[p]: 2.0 + v for p, v in zip(positions.tolist(), values.tolist(), strict=True)}
    column[drawn.greedy] = GREEDY_RANK
    return column


def _ranks_of_few(drawn: Draw, actions: Sequence[str], demand: int) -> dict[str, float]:
    """``ranks`` for a draw among a few actions, in plain Python (the same ranks)."""
    floor = drawn.floor
    pairs = [
        (p, v)
        for p, v in zip(drawn.positions, drawn.values, strict=True)
        if (v > floor if floor is not None else v == v)  # NaN: untried, not valued
    ]
    if len(pairs) > demand > 0:
        least = sorted((v for _, v in pairs), reverse=True)[demand - 1]
        pairs = [(p, v) for p, v in pairs if v >= least]
    column = {actions[p]: 2.0 + v for p, v in pairs}
    column[drawn.greedy] = GREEDY_RANK
    return column
