"""Which schedd an attempt's epoch ad belongs to, whichever schedd's history returned it.

The shadows write the epoch ads, and a shadow has no local name: two schedds on one host (an
access point running several, `-local-name`) append to the one ``JOB_EPOCH_HISTORY`` of the
configuration without a local name. The first schedd's history then holds the second's
attempts too, and the second's none. An ad's ``GlobalJobId`` (``schedd#cluster.proc#qdate``)
names its schedd, so each ad goes to the schedd that ran the attempt, named on it, with its
queue's bookkeeping (docs/live-daemon.md, "A job is named on its schedd").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from advisor.condor.epochs import epoch_key, schedd_of

KEPT_S = 86400.0
"""How long, in write time, an ad's identity is kept against a second report: two schedds
configured with one history file both return every ad."""


@dataclass
class EpochOwners:
    """Routes each schedd's fresh epoch ads to the schedd that ran them, each attempt once."""

    reported: dict[str, float] = field(default_factory=dict)
    """The routed-to schedd and the ad's identity -> its write time, for the ads passed on
    within ``KEPT_S`` of the newest, oldest first (ads come in write order, nearly: the oldest
    are dropped from the front)."""
    newest: float = 0.0

    def route(
        self, read: Mapping[str, Sequence[Mapping[str, Any]] | None]
    ) -> dict[str, list[Mapping[str, Any]]]:
        """Per schedd read (``None``: its history did not answer), the ads it ran, in write
        order. An ad naming a schedd not read stays with the one that returned it, as before
        ads were routed: a configured name that differs from ``Name`` must not lose them."""
        routed: dict[str, list[tuple[tuple[float, str], Mapping[str, Any]]]] = {
            name: [] for name in read
        }
        for reader, ads in read.items():
            for ad in ads or ():
                key = epoch_key(ad)
                if key is None:
                    continue
                owner = schedd_of(ad) or reader
                owner = owner if owner in routed else reader
                ident = f"{owner}#{key[1]}"
                if ident not in self.reported:
                    self.reported[ident] = key[0]
                    self.newest = max(self.newest, key[0])
                    routed[owner].append((key, ad))
        while self.reported and self.reported[next(iter(self.reported))] < self.newest - KEPT_S:
            del self.reported[next(iter(self.reported))]
        return {
            name: [ad for _, ad in sorted(pairs, key=itemgetter(0))]
            for name, pairs in routed.items()
        }
