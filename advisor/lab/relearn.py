"""What a snapshot leaves out, learned again from the daemon's journal when it starts.

An idle-time policy learns every machine's owner sessions and reboots: a campus year has millions,
too many to rewrite into a snapshot every few minutes (``Policy.SNAPSHOT_LEAVES_OUT``). The
journal keeps them anyway, append-only, and the snapshot's source cursor says how far into it the
policy had learned (``journal_bytes``). Exactly those events are fed again; the source, resumed
from the same cursor, reports what came after, so nothing is learned twice. Its models, which a
snapshot keeps neither (they are pickles), are then fitted again at once, the same as before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from advisor.daemon.host import PolicyHost
from advisor.daemon.notify import sd_notify
from advisor.ports import Observation, PoolSource
from plugins.contract.events import Event
from plugins.contract.policy import Policy
from plugins.idle.policy import IdlePolicy

log = logging.getLogger("htcondor_advisor.daemon")
PROGRESS = 500_000
"""Events between two notes to systemd that the start is still under way."""
EXTEND = "EXTEND_TIMEOUT_USEC=60000000"
"""Each note gives the start another minute, counted from the note, so that relearning a long
journal is not cut off by the unit's ``TimeoutStartSec`` (500,000 events of a campus year are
read in about 4 s)."""


def relearn(host: PolicyHost, resumed: Mapping[str, Any] | None, state_dir: Path | None) -> int:
    """Feed the host's policy the journal's events its snapshot ``resumed`` leaves out; how many.

    ``state_dir`` is where the journal is (None: ``pool.journal`` is off)."""
    kinds = host.policy.SNAPSHOT_LEAVES_OUT
    if not kinds or resumed is None:
        return 0
    until = resumed["cursor"].get("journal_bytes")
    if until is None or state_dir is None:
        log.warning(
            "%s resumes without the owner sessions it had learned: its snapshot names no place "
            "in a journal (pool.journal: true keeps them from the next start on)",
            host.policy.label,
        )
        return 0
    from advisor.lab.journal_read import read_events  # the trace readers, only when needed
    from simulator.traces.errors import TraceError

    fed, chunk = 0, []
    sd_notify(f"{EXTEND}\nSTATUS=relearning the owner history from the journal")
    try:
        for event in read_events(state_dir, until, kinds):
            chunk.append(event)
            if len(chunk) == PROGRESS:
                fed, chunk = fed + feed(host, chunk), []
                sd_notify(f"{EXTEND}\nSTATUS=relearned {fed} events")
    except TraceError as exc:  # the advice goes on; what was not relearned is said
        fed += feed(host, chunk)
        label = host.policy.label
        log.warning("%s; %s relearned only the %d events before it", exc, label, fed)
        return fed
    fed += feed(host, chunk)
    log.info("%s learned %d events again from the journal", host.policy.label, fed)
    return fed


def feed(host: PolicyHost, events: Iterable[Event]) -> int:
    """Hand the host's policy the events of ``events`` its snapshot leaves out, on machines it
    knows; how many."""
    kinds, fed = host.policy.SNAPSHOT_LEAVES_OUT, 0
    with host.lock:
        for event in events:
            if type(event) in kinds and getattr(event, "machine", None) in host.machines:
                host.policy.observe(event)
                fed += 1
    return fed


class RelearningSource:
    """The twin's journal: its pool as the host that re-simulates it up to a snapshot polls it,
    handing the restored policy what its snapshot leaves out of the events until then."""

    def __init__(self, pool: PoolSource, restored: PolicyHost, until: float) -> None:
        self.pool, self.restored, self.until = pool, restored, until

    def poll(self, now: float) -> Observation:
        observed = self.pool.poll(now)
        feed(self.restored, [e for e in observed.events if e.time <= self.until])
        return observed

    def cursor(self) -> dict[str, Any]:
        return self.pool.cursor()

    def restore(self, cursor: Mapping[str, Any]) -> None:
        self.pool.restore(cursor)


def trained_until(policy: Policy) -> float | None:
    """The cut-off of the policy's last training, models kept or not (None: never trained, or a
    policy without idle-time models)."""
    return policy.trainer.trained_until if isinstance(policy, IdlePolicy) else None


def refit_at_start(policy: Policy, had: float | None) -> bool:
    """Whether to fit again at once the models a restart lost: the snapshot's policy had been
    trained (``had``: up to when), and the models it starts with are none, or a store's older
    ones. Fitted with the cut-off ``had`` on the relearned history, they are the lost ones: the
    samples and the seeds are drawn from the history before the cut-off and from it alone."""
    if had is None or not isinstance(policy, IdlePolicy):
        return False
    return not policy.models or (policy.trainer.trained_until or 0.0) < had


def missed_retraining(
    policy: Policy, crontab: str, had: float | None, saved_at: float | None, now: float
) -> float | None:
    """When a scheduled retraining (``learning.retrain``) fell after the policy's last one
    (``had``; never trained: after its snapshot was ``saved_at``) and before this start: the
    daemon was down then, or was stopped while it trained. It is made up at once; the schedule
    alone would wait for its next time, and a restart just after 00:00 on the 1st would serve
    last month's models (or none) for another month."""
    if not isinstance(policy, IdlePolicy):
        return None
    since = max((t for t in (had, policy.trainer.trained_until) if t is not None), default=None)
    since = saved_at if since is None else since
    if since is None:
        return None
    trigger = CronTrigger.from_crontab(crontab, timezone="UTC")
    due = trigger.get_next_fire_time(None, datetime.fromtimestamp(since + 1, UTC))
    return due.timestamp() if due is not None and due.timestamp() <= now else None
