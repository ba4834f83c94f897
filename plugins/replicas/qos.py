"""QoS bounds and the reward of a replica count (paper 003 sec. 4.1-4.2), k = 1."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

HOUR = 3600.0
K = 1.0
"""Rewards lie in [-k, k]; the paper chooses k = 1."""


@dataclass(frozen=True)
class QosBound:
    """``within-hour``: turnaround <= floor(e) + 1 hours; ``overhead:P``: <= e (1 + P/100)."""

    kind: str = "within-hour"
    percent: float = 0.0

    def deadline(self, submit: Any, exec_s: Any) -> Any:
        """Latest finish that meets the bound (floats or numpy arrays alike)."""
        if self.kind == "within-hour":
            return submit + (np.floor(exec_s / HOUR) + 1) * HOUR
        return submit + exec_s * (1.0 + self.percent / 100.0)

    def met(self, submit: float, finish: float, exec_s: float) -> bool:
        return bool(finish <= self.deadline(submit, exec_s))

    def __str__(self) -> str:
        return self.kind if self.kind == "within-hour" else f"overhead:{self.percent:g}"


def parse_qos(text: str) -> QosBound:
    kind, _, pct = text.strip().partition(":")
    if kind == "within-hour" and not pct:
        return QosBound()
    if kind == "overhead" and pct:
        value = float(pct)
        if value >= 0:
            return QosBound("overhead", value)
    raise ValueError("expected within-hour or overhead:P with P >= 0, e.g. qos=overhead:50")


def wasted_penalty(
    delta: float, wasted_wh: float, replicas: int, exec_s: float, watts: float
) -> float:
    """``sigma_t = delta min(1, W_t / (a d_t Xi))``: wasted work against the work of a replicas."""
    work_wh = replicas * exec_s / HOUR * watts
    return delta * min(1.0, wasted_wh / work_wh) if work_wh > 0 else delta


def contender_penalty(delta: float, contenders: int, replicas: int) -> float:
    """``sigma_t = delta c / a``: c other replicas could have met the QoS bound too."""
    return delta * contenders / replicas


def replica_reward(met: bool, penalty: float) -> float:
    """``R_t = +k - sigma_t`` when the task met its QoS bound, else ``-k``."""
    return K - penalty if met else -K
