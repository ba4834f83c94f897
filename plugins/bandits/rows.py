"""How a placement bandit's decisions become advice: one rank row per action.

Per prior-hours class k, a decision ranks actions (absent: -1, which keeps class-k jobs off).
Read across the 24 classes, an action's ranks are a row, ``AdvisorRankByPriorHours`` of each free
machine of that action; the machines follow the row as one named advice, so a new row re-ranks
them all at once. A row is stated in full once, and from then on by the classes whose rank
changed (``Advice.shared_ranks``): a decision moves a few ranks of one class. The rows hold until
the end of the next hour and are renewed each hour, all with one time (``Advice.shared_until``):
advice outlives the bandit's state (the hour) by at most one hour, and a stopped advisor's advice
lapses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from plugins.contract.advice import PRIOR_HOURS_CLASSES, Advice, MachineAdvice

HOUR = 3600.0
OFF_RANKS = (-1.0,) * PRIOR_HOURS_CLASSES
EXPLORE_RANK = 1e6
INTERNED_ROWS = 50_000


class ActionRows:
    def __init__(self, actions: Sequence[str]) -> None:
        self.actions = list(actions)
        self.rows: dict[str, list[float]] = {action: list(OFF_RANKS) for action in self.actions}
        """Per action, its rank per class (a tuple is built only for its advice)."""
        self.hour_end = 0.0
        """The end of the hour in which the rows were last renewed (they hold one hour more)."""
        self._advice: dict[str, MachineAdvice] = {}
        self.columns: list[dict[str, float]] = [{} for _ in range(PRIOR_HOURS_CLASSES)]
        """Per class k, the ranks of the last decision by action."""
        self._changes: dict[str, dict[int, float]] = {}
        self.announced: set[str] = set()
        """The actions whose row was stated in full (later rounds state it by class)."""
        self._explored: dict[tuple[float, ...], MachineAdvice] = {}

    def add_actions(self, actions: Sequence[str]) -> None:
        """Rows for new actions, from the decisions already known (a restored column may name
        an action before its machines are seen again)."""
        for action in actions:
            self.actions.append(action)
            self.rows[action] = [col.get(action, -1.0) for col in self.columns]

    def set_column(self, k: int, column: dict[str, float]) -> None:
        """Class k's new ranks by action (ranks are never -1: absent means -1)."""
        last = self.columns[k]
        if column == last:  # most draws repeat the last decision
            return
        self.columns[k] = column
        rows, changes = self.rows, self._changes
        # a flip re-ranks a thousand actions: one lookup each, and the dropped ones found in C
        # (walking ``last``: ``last.keys() - column.keys()`` would walk all of ``column``)
        for action in set(last).difference(column):
            rows[action][k] = changes.setdefault(action, {})[k] = -1.0
        for action, rank in column.items():
            if last.get(action) != rank:
                rows[action][k] = changes.setdefault(action, {})[k] = rank

    def changes(self) -> dict[str, dict[int, float]]:
        """Per action whose row changed since last asked, its new ranks by class."""
        changes, self._changes = self._changes, {}
        for action in changes.keys() & self._advice.keys():  # stale: rebuilt when next asked
            del self._advice[action]
        return changes

    def state(
        self, advice: Advice, changes: dict[str, dict[int, float]], followed: set[str]
    ) -> None:
        """This round's rows in ``advice``: a row in full the first time and whenever machines
        start to follow it (``followed``, which this extends; a fresh daemon learns the value it
        follows), otherwise by the classes whose rank changed (``changes``, from ``changes()``)."""
        announced = self.announced
        if changes:
            advice.shared_ranks = {a: changes[a] for a in sorted(changes) if a in announced}
            followed.update(a for a in changes if a not in announced)
        if followed:
            advice.shared = {action: self.advice(action) for action in sorted(followed)}
            announced |= followed

    def until(self, now: float) -> float:
        """When the rows lapse unless renewed: the end of the hour after the current one."""
        if now >= self.hour_end:
            self.hour_end = (now // HOUR + 1) * HOUR
        return self.hour_end + HOUR

    def advice(self, action: str) -> MachineAdvice:
        """The advice every free machine of ``action`` follows (one object per row)."""
        adv = self._advice.get(action)
        if adv is None:
            adv = self._advice[action] = MachineAdvice(rank_by_prior_hours=tuple(self.rows[action]))
        return adv

    def explored(self, action: str, classes: Iterable[int]) -> MachineAdvice:
        """The action's row with the top rank for ``classes`` (exploring on one machine); one
        object per distinct row, so the negotiator ranks a few groups."""
        top = set(classes)
        row = tuple(EXPLORE_RANK if k in top else r for k, r in enumerate(self.rows[action]))
        adv = self._explored.get(row)
        if adv is None:
            if len(self._explored) > INTERNED_ROWS:
                self._explored.clear()  # old rows are no longer published anywhere
            adv = self._explored[row] = MachineAdvice(rank_by_prior_hours=row)
        return adv

    def rebuild(
        self, columns: Sequence[dict[str, float]], hour_end: float, announced: Iterable[str]
    ) -> None:
        """The rows of restored decisions (a snapshot keeps the columns, not the rows)."""
        self.announced = set(announced)
        self.columns = [dict(col) for col in columns]
        for action in self.actions:
            self.rows[action] = [col.get(action, -1.0) for col in columns]
        self.hour_end = hour_end
        self._advice.clear()
        self._changes.clear()
