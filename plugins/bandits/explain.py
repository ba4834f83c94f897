"""What a placement bandit's advice for one machine rests on (``Policy.explain``): the bandit
decides per action, so these are the values of the machine's action (its cluster at the cluster
level), named as that action's, not the machine's own.

Its free machines follow the action's rank row (``rows.py``); the draws compare the action's
estimates q'(s, a) with staying queued, in the states (hour, k) of the current hour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plugins.bandits.agent import BanditAgent
from plugins.bandits.decision import QUEUE
from plugins.contract.advice import PRIOR_HOURS_CLASSES

if TYPE_CHECKING:
    from plugins.bandits.placement import PlacementBandit


def learned(agent: BanditAgent, hour: int, action: str) -> dict[str, dict[str, Any]]:
    """q'(s, a) and its reward count for each class k whose state (hour, k) rewarded ``action``."""
    found = {
        str(k): est
        for k in range(PRIOR_HOURS_CLASSES)
        if (est := agent.estimates.get((hour, k), {}).get(action)) is not None
    }
    return {
        "q' by class": {k: est.value for k, est in found.items()},
        "rewards by class": {k: est.count for k, est in found.items()},
    }


def explain_bandit(bandit: PlacementBandit, machine: str) -> dict[str, Any]:
    """The machine's action: its rank row, free machines and, once the bandit has decided, this
    hour's estimates beside staying queued's; and the classes exploring on this machine."""
    action = bandit.action_of.get(machine)
    if action is None:
        return {}
    place = bandit.inventory.place_of[machine]
    own: dict[str, Any] = {
        "ranks by class": list(bandit.rows.rows[action]),
        "free machines": len(bandit.free.members[place]),
    }
    said: dict[str, Any] = {}
    if bandit.slot >= 0:  # the hour of its last decision: its states are (hour, k)
        said["decision hour"] = f"{bandit.slot} of the {'week' if bandit.WEEK else 'day'}"
        own.update(learned(bandit.agent, bandit.slot, action))
    said[f"{bandit.LEVEL} {action}"] = own
    if bandit.slot >= 0:
        said["stay queued"] = learned(bandit.agent, bandit.slot, QUEUE)
    explored = sorted(k for k, m in bandit.explore.items() if m == machine)
    if explored:
        said[f"machine {machine}"] = {"explored by classes": explored}
    return said
