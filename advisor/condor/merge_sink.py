"""``MERGE_STARTD_AD`` sink: the ``Advisor*`` attributes merged into the collector's startd ads.

The negotiator then sees the advice at once, before the hook's next run puts it in the startd's
own ad. A startd update replaces its ad and drops merged attributes, so every publish re-merges
all current advice (the daemon publishes each cycle); a merge into a missing ad is silently
ignored by the collector, so only slots the collector knows are merged, offline ones included
(condor_rooster reads their ``AdvisorPower``), and of those only the static and partitionable
ones, where the negotiator matches (``source.merged_slots``). Only ``Advisor*`` attributes are
ever sent. A merge the collector refuses (the bindings say only "Failed to advertise") raises
``SinkRefused``, which the daemon logs as one line naming the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.condor.attributes import ADVISOR_PREFIX, advice_attributes
from advisor.ports import refused_as
from plugins.contract.advice import Advice

SlotNames = Callable[[], dict[str, list[str]]]


@dataclass
class MergeStartdSink:
    """Merges into the slots of each advised machine; ``slots`` maps Machine -> slot Names."""

    collector: Any
    slots: SlotNames
    policy: str = "unknown"
    name: str = "collector-merge"
    reaches_sleeping = True
    """Merges into offline ads persist, where condor_rooster reads "wake" (unpublished.py)."""

    def publish(self, advice: Advice, now: float) -> None:
        import classad2

        by_machine = self.slots()
        ads = []
        for machine, adv in advice.machines.items():
            # neutral advice withdraws: expired at once (a merge cannot remove attributes)
            expires = adv.expires if adv.expires is not None else now
            attrs = advice_attributes(adv, now, expires, self.policy)
            assert all(k.startswith(ADVISOR_PREFIX) for k in attrs)
            for slot in by_machine.get(machine, []):
                ad = classad2.ClassAd()
                ad["MyType"] = "Machine"
                ad["Name"] = slot
                for key, value in attrs.items():
                    ad[key] = value
                ads.append(ad)
        if not ads:
            return
        with refused_as(
            f"the collector did not merge the advice of {len(ads)} slot(s)",
            "if it is up, the advisor's token needs -authz NEGOTIATOR (deploy/TOKENS.md), or "
            "set pool.merge: false to publish through the hooks alone",
        ):
            self.collector.advertise(ads, "MERGE_STARTD_AD")
