"""Estimates of an action's value from its rewards (paper 000 eq. 3, sec. 4.4.1 and eq. 7-8).

``all``: the mean of every reward (eq. 3); ``last:N``: the mean of the N most recent;
``gaussian:N``: the N most recent weighted by ``w_i = exp(-8 (N - i) / N)`` (eq. 8), i = N the
most recent. The weights are geometric (each older reward weighs ``exp(-8/N)`` times the next),
so every estimate is updated in O(1) per reward instead of re-summing N rewards.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HistorySpec:
    """How much of the past an estimate uses: ``kind`` is all, last or gaussian; ``n`` its size."""

    kind: str = "all"
    n: int = 0

    def __str__(self) -> str:
        return self.kind if self.kind == "all" else f"{self.kind}:{self.n}"


def parse_history(text: str) -> HistorySpec:
    """``all``, ``last:N`` or ``gaussian:N`` (N >= 1)."""
    kind, _, size = text.strip().partition(":")
    if kind == "all" and not size:
        return HistorySpec()
    if kind in ("last", "gaussian") and size.isdigit() and int(size) >= 1:
        return HistorySpec(kind, int(size))
    raise ValueError("expected all, last:N or gaussian:N with N >= 1, e.g. history=last:500")


def gaussian_weight(i: int, n: int) -> float:
    """Eq. 8: ``w_i = exp(-8 (n - i) / n)``; 1 for the most recent reward (i = n)."""
    return math.exp(-8.0 * (n - i) / n)


class Estimate:
    """The running value q'(s, a) of one state-action pair."""

    __slots__ = ("count", "spec", "total", "weights", "window")

    def __init__(self, spec: HistorySpec) -> None:
        self.spec = spec
        self.count = 0
        self.total = 0.0
        self.weights = 0.0
        self.window: deque[float] | None = deque() if spec.kind != "all" else None

    def add(self, reward: float) -> None:
        self.count += 1
        window, spec = self.window, self.spec
        if window is None:  # eq. 3
            self.total += reward
            return
        dropped = window.popleft() if len(window) == spec.n else None
        window.append(reward)
        if spec.kind == "last":
            self.total += reward - (dropped or 0.0)
            return
        # eq. 7: age every weight by one step, drop the reward that fell out of the window.
        decay = math.exp(-8.0 / spec.n)
        oldest = gaussian_weight(0, spec.n)  # the weight it would have had after ageing
        self.total = (
            self.total * decay + reward - (dropped * oldest if dropped is not None else 0.0)
        )
        self.weights = self.weights * decay + 1.0 - (oldest if dropped is not None else 0.0)

    @property
    def value(self) -> float:
        if self.count == 0:
            return 0.0
        if self.window is None:
            return self.total / self.count
        if self.spec.kind == "last":
            return self.total / len(self.window)
        return self.total / self.weights

    def state(self) -> list[Any]:
        return [self.count, self.total, self.weights, list(self.window or ())]

    @classmethod
    def restore(cls, spec: HistorySpec, saved: list[Any], kept: HistorySpec | None) -> Estimate:
        """The estimate ``state`` saved under the history option ``kept`` (None: not said, a
        snapshot of an earlier version), continued under ``spec``. Kept under another option,
        it starts from the rewards it kept (``last``, ``gaussian``) or, kept whole (``all``),
        from its mean, as many times as the new window holds: restored as they were, the sums
        of one option read under another divided by zero or halved the estimates."""
        est = cls(spec)
        count, total, weights = int(saved[0]), float(saved[1]), float(saved[2])
        window = [float(r) for r in saved[3]]
        if (kept is None or kept == spec) and (est.window is None or window or not count):
            est.count, est.total, est.weights = count, total, weights
            if est.window is not None:
                est.window.extend(window)
            return est
        if window:
            carried = window
        elif count:  # kept whole: its sum over every reward
            carried = [total / count] * (min(count, spec.n) if spec.n else 1)
        else:
            carried = []
        for reward in carried:
            est.add(reward)
        return est
