"""The policy's answer to a view, checked before it is published.

A site's own policy (docs/writing-a-policy.md) is code the daemon did not ship. When it raises,
the daemon says what and where, in one line an hour (the traceback at DEBUG), renews no advice
so what stands lapses as in an outage, and goes on: a restart by systemd would only meet the
same bug. Advice for a machine the collector never showed is left out, since no startd would
read it.
"""

from __future__ import annotations

import logging
from collections.abc import Container

from advisor.daemon.logs import iso
from advisor.daemon.recurring import Recurring
from plugins.contract.advice import Advice
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
