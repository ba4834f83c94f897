"""What a reload (SIGHUP) cannot apply: the keys the daemon reads only when it starts.

The options of a policy that relearns its owner history from the journal at start
(``SNAPSHOT_LEAVES_OUT``: the idle policies) are among them. Rebuilt with new options by a
reload, it kept its snapshot's state but lost its history and its models, so its advice stayed
neutral until a restart relearned the journal; the change now waits for that restart, which
relearns the history and refits the models (advisor/lab/relearn.py). A change to another
policy is still applied: a restart would refuse the snapshot of the other one, and the log
says that learning starts over (host.py).
"""

from __future__ import annotations

from advisor.daemon.config import DaemonConfig
from plugins.contract.registry import policy_class

AT_START = {
    "pool": None,  # every key: the source is built once
    "state": ("directory", "keep"),
    "control": None,  # the split and its books (a new percent starts them anew)
    "learning": ("idle_models",),
    "publish": ("listen",),
    "metrics": ("enabled",),  # the endpoint serves /metrics or not from its start
}
"""What the daemon reads only when it starts (SIGHUP applies the rest)."""


def restart_keys(old: DaemonConfig, new: DaemonConfig) -> list[str]:
    """The keys a reload changed that take effect only at the next start."""
    changed = []
    for section, keys in AT_START.items():
        before, after = getattr(old, section), getattr(new, section)
        for key in keys or sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                changed.append(f"{section}.{key}")
    same_kind = old.policy["name"] == new.policy["name"]
    if (
        same_kind
        and old.policy != new.policy
        and policy_class(new.policy["name"]).SNAPSHOT_LEAVES_OUT
    ):
        changed.append("policy.options")
    return changed
