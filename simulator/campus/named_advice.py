"""Named advice from a policy's answer to matching: renew the names, state their values, and
re-rank the groups of the followers whose advice changed."""

from __future__ import annotations

from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice
from simulator.campus.advice_cache import AdviceCache
from simulator.campus.advice_groups import AdviceGroups


def apply_names(cache: AdviceCache, groups: AdviceGroups, advice: Advice, now: float) -> None:
    """Renew and (re)state the named advice; re-rank the followers of names whose value they
    now carry changed. Names that lapsed since the last round and are renewed in this one never
    reach the groups: matching never saw them lapse."""
    revived = cache.renew(advice.shared_until, now)
    lapsed, cache.lapsed = cache.lapsed, []
    if lapsed and not revived:
        for name in lapsed:
            groups.restate(name, NEUTRAL_MACHINE_ADVICE)
    elif revived and not lapsed:  # lapsed in an earlier round
        for name in list(cache.shared):
            named = cache.named(name)
            assert named is not None
            groups.restate(name, named[0])
    groups.rerank(cache.restate_ranks(advice.shared_ranks))  # before ``shared``: see ``Advice``
    for name, value in advice.shared.items():
        if cache.state(name, value, now):
            groups.restate(name, value)
