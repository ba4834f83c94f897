"""The policy's answer to a view, checked before it is published, and its failures to learn.

A site's own policy (docs/writing-a-policy.md) is code the daemon did not ship. When it raises,
the daemon says what and where, in one line an hour (the traceback at DEBUG), and goes on: a
restart by systemd would only meet the same bug. Raised in ``advise``, no advice is renewed and
what stands lapses as in an outage; raised in ``observe``, that event is skipped. Advice for a
machine the collector never showed is left out, since no startd would read it.
"""

from __future__ import annotations

import logging
from collections.abc import Container

from advisor.daemon.logs import iso
from advisor.daemon.recurring import Recurring
from plugins.contract.advice import Advice
from plugins.contract.events import Event
from plugins.contract.policy import Policy, PoolView
from plugins.contract.raised import raised_at
from plugins.contract.yaml_text import one_line

log = logging.getLogger("htcondor_advisor.daemon")


def answer(
    policy: Policy, view: PoolView, now: float, known: Container[str], said: Recurring
) -> tuple[Advice | None, str | None]:
    """(the advice on machines in ``known``, None when the policy raised; what it raised)."""
    label = policy.label
    try:
        decided = policy.advise(view, now)
    except Exception as exc:
        log.debug("%s raised in advise()", label, exc_info=True)
        failing = f"{type(exc).__name__}: {exc}{raised_at(exc)}"
        text = f"{label} failed to advise ({failing}); advice not renewed, it lapses until it does"
        said.say("policy", one_line(text), now, logging.ERROR)
        return None, failing
    said.ended("policy", f"{label} advises again at {iso(now)}")
    unknown = [name for name in decided.machines if name not in known]
    for name in unknown:
        del decided.machines[name]
    if unknown:
        text = f"{label} advised {len(unknown)} machines the pool never showed, e.g. {unknown[0]!r}"
        said.say("unknown", f"{text}: not published", now)
    return decided, None


def failed_to_learn(policy: Policy, event: Event, exc: Exception, said: Recurring) -> None:
    """``observe`` raised on ``event``: said with where (once an hour), the event skipped."""
    log.debug("%s raised in observe()", policy.label, exc_info=exc)
    what = f"{type(exc).__name__}: {exc}{raised_at(exc)}"
    text = f"{policy.label} failed to learn from {type(event).__name__} ({what}); events skipped"
    said.say("learn", one_line(text), event.time, logging.ERROR)
