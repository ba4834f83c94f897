"""Owner arrivals per room and hour of the week, learned from the sessions the pool reports.

An arriving owner takes a free machine of the room, so a free machine of cluster c is taken at
rate lambda[c, h] = logins / free machine-hours in hour h of the week (a Poisson process, the
assumption behind paper 000's hourly states); the chance that a job of runtime R started now is
evicted by an owner is then 1 - exp(-sum of lambda over [now, now+R]).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from plugins.contract.clock import HOUR, hour_of_week

WEEK_HOURS = 168
PRIOR_HOURS = 24.0
"""Pseudo-exposure (machine-hours) per bin at the pool's mean rate: a new cluster or an hour
never seen yet starts at the pool's average, not at zero risk."""


class OwnerArrivals:
    def __init__(self) -> None:
        self.cluster_index: dict[str, int] = {}
        self.machines: list[int] = []
        """Machines per cluster."""
        self.slots: list[int] = []
        """One-core jobs the machines of each cluster run at once (``MachineInfo.jobs_at_once``):
        a fact of the machines, not saved, counted again as they rejoin after a restart."""
        self.most_at_once = 1
        """The most one-core jobs one machine runs at once (the same kind of fact)."""
        self.owned: list[int] = []
        """Machines of each cluster with an owner now."""
        self.logins = np.zeros((0, WEEK_HOURS))
        self.exposure = np.zeros((0, WEEK_HOURS))
        """Free machine-hours watched, per cluster and hour of the week."""
        self.since: list[float] = []
        """Per cluster, the time up to which its exposure is counted."""

    def join(self, clusters: Sequence[str]) -> None:
        """One more machine in each of ``clusters`` (one entry per machine)."""
        for cluster in clusters:
            index = self.cluster_index.get(cluster)
            if index is None:
                index = self.cluster_index[cluster] = len(self.machines)
                self.machines.append(0)
                self.slots.append(0)
                self.owned.append(0)
                self.since.append(math.nan)
                self.logins = np.vstack([self.logins, np.zeros((1, WEEK_HOURS))])
                self.exposure = np.vstack([self.exposure, np.zeros((1, WEEK_HOURS))])
            self.machines[index] += 1

    def count_slots(self, clusters: Sequence[str], jobs_at_once: Sequence[int]) -> None:
        """Machines of joined ``clusters`` running ``jobs_at_once`` jobs each (one entry each)."""
        for cluster, jobs in zip(clusters, jobs_at_once, strict=True):
            self.slots[self.cluster_index[cluster]] += jobs
            self.most_at_once = max(self.most_at_once, jobs)

    def _count(self, c: int, now: float) -> None:
        """Add cluster c's free machine-hours since it was last counted, hour by hour."""
        t = self.since[c]
        self.since[c] = now
        free = self.machines[c] - self.owned[c]
        if math.isnan(t) or free <= 0:
            return
        row = self.exposure[c]
        while t < now:
            end = min((t // HOUR + 1) * HOUR, now)
            row[hour_of_week(t)] += free * (end - t) / HOUR
            t = end

    def login(self, cluster: str, now: float) -> None:
        c = self.cluster_index[cluster]
        self._count(c, now)
        self.logins[c, hour_of_week(now)] += 1
        self.owned[c] = min(self.owned[c] + 1, self.machines[c])

    def logout(self, cluster: str, now: float) -> None:
        c = self.cluster_index[cluster]
        self._count(c, now)
        self.owned[c] = max(self.owned[c] - 1, 0)

    def rates(self, now: float) -> np.ndarray:
        """lambda[c, h]: logins per free machine-hour, shrunk towards the pool's mean rate."""
        for c in range(len(self.machines)):
            self._count(c, now)
        total = float(self.exposure.sum())
        mean = float(self.logins.sum()) / total if total else 0.0
        return (self.logins + PRIOR_HOURS * mean) / (self.exposure + PRIOR_HOURS)

    def rates_ahead(self, now: float, hours: int) -> np.ndarray:
        """lambda[c, j]: the rates of the hour j hours from now (column 0: this hour)."""
        ahead = np.roll(self.rates(now), -hour_of_week(now), axis=1)
        return np.tile(ahead, (1, -(-hours // WEEK_HOURS)))[:, :hours]

    def eviction_chance(self, now: float, runtimes_h: np.ndarray) -> np.ndarray:
        """P[c, k]: the chance an owner of cluster c arrives within ``runtimes_h[k]`` from now."""
        return self.eviction_chance_ahead(now, runtimes_h, 1)[0]

    def eviction_chance_ahead(self, now: float, runtimes_h: np.ndarray, starts: int) -> np.ndarray:
        """P[d, c, k]: the chance an owner of cluster c arrives within ``runtimes_h[k]`` of a
        start d whole hours from now, for d below ``starts`` (at most a week)."""
        rates = self.rates(now)
        runtimes = np.asarray(runtimes_h, dtype=float)
        if not len(rates):
            return np.zeros((starts, 0, len(runtimes)))
        ahead = np.roll(rates, -hour_of_week(now), axis=1)  # column 0: this hour
        cum = np.concatenate([np.zeros((len(rates), 1)), np.cumsum(np.tile(ahead, 3), axis=1)], 1)
        whole = np.minimum(runtimes, 2 * WEEK_HOURS)
        low = np.floor(whole).astype(int)
        high = np.minimum(low + 1, 2 * WEEK_HOURS)
        frac = whole - low  # linear between whole hours
        start = np.arange(starts)[:, None]
        at_low, at_high = cum[:, start + low], cum[:, start + high]  # [c, d, k]
        load = at_low + (at_high - at_low) * frac - cum[:, start]
        return 1.0 - np.exp(-load.transpose(1, 0, 2))

    def state_dict(self) -> dict[str, Any]:
        return {
            "clusters": list(self.cluster_index),
            "machines": list(self.machines),
            "owned": list(self.owned),
            "logins": self.logins.tolist(),
            "exposure": self.exposure.tolist(),
            "since": [None if math.isnan(t) else t for t in self.since],
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.cluster_index = {c: i for i, c in enumerate(state["clusters"])}
        self.machines = [int(n) for n in state["machines"]]
        self.slots, self.most_at_once = [0] * len(self.machines), 1
        self.owned = [int(n) for n in state["owned"]]
        self.logins = np.asarray(state["logins"], dtype=float).reshape(-1, WEEK_HOURS)
        self.exposure = np.asarray(state["exposure"], dtype=float).reshape(-1, WEEK_HOURS)
        self.since = [math.nan if t is None else float(t) for t in state["since"]]
