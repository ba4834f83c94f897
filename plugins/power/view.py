"""What a power policy sees of a dedicated cluster at a decision, and what it decides.

The view carries requested walltimes but never runtimes: only an oracle policy is handed a
``RuntimeOracle`` (the cluster gives it to policies with ``NEEDS_ORACLE``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

OFF, IDLE, COMPUTING, SWITCHING_ON, SWITCHING_OFF = range(5)
"""Node states, as ``simulator.dedicated.power.NodeState`` (plugins import no simulator)."""


def node_name(node: int) -> str:
    """The machine name a dedicated cluster's node has in ``Advice.machines``."""
    return f"node{node}"


def node_number(name: str) -> int:
    """The node a ``node_name`` names."""
    return int(name.removeprefix("node"))


@dataclass(frozen=True)
class ClusterView:
    """A snapshot: node states, the queue in scheduler order, running jobs' requests.

    Times are seconds since the episode's midnight; ``promise`` is the scheduler's planned start
    of the first queued job (inf when none or blocked by the reservation).
    """

    now: float
    cores_per_node: int
    node_state: np.ndarray
    reserved: np.ndarray
    idle_since: np.ndarray
    queue_cores: np.ndarray
    queue_walltime: np.ndarray
    queue_arrival: np.ndarray
    queue_user_jobs: np.ndarray
    running_cores: np.ndarray
    running_start: np.ndarray
    running_walltime: np.ndarray
    promise: float
    switch_on_s: float
    ready_at: np.ndarray
    """When a switching node can next compute (after its boot, or its shutdown and a boot)."""

    @property
    def nodes(self) -> int:
        return len(self.node_state)

    def count(self, state: int) -> int:
        return int(np.count_nonzero(self.node_state == state))


class RuntimeOracle(Protocol):
    """The future: true runtimes of the running and the queued jobs (same order as the view)."""

    def running_end(self) -> np.ndarray: ...

    def queued_runtime(self) -> np.ndarray: ...


@dataclass(frozen=True)
class PowerDecision:
    """Switch these idle nodes off, and hold ``reserve`` nodes off and away from the scheduler.

    A power policy's own step (``PowerPolicy.decide``); drivers are answered with ``Advice``."""

    reserve: int = 0
    switch_off: tuple[int, ...] = ()
