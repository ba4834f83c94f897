"""Sleeping machines advised to wake that did not: left out of the policy's view for a while.

condor_rooster sends wake-on-LAN to an offline machine advised "wake" (deploy/power). A machine
that cannot wake (unplugged, wake-on-LAN off in its firmware, its switch port down) stays
offline, and its ad stays in the collector for as long as ``OFFLINE_EXPIRE_ADS_AFTER`` says,
forever by default. A power policy would advise it "wake" every cycle and count it as the
capacity the waiting jobs get, so the machines it wakes after it stayed asleep and jobs waited.
A machine still asleep ``WAKE_ANSWER_S`` after its first published "wake" is therefore left out
of the view for ``WAKE_RETRY_S`` (its advice lapses as any unrenewed advice does), said once,
and counted in ``advisor_machines_unwakeable``; then it is tried again.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from advisor.daemon.metrics import DaemonMetrics
from plugins.contract.advice import MachineAdvice, PowerAdvice
from plugins.contract.policy import PoolView

log = logging.getLogger("htcondor_advisor.host")

WAKE_ANSWER_S = 15 * 60.0
"""A wake takes a few rooster intervals (60 s in deploy/power) and a boot of a minute or two."""
WAKE_RETRY_S = 6 * 3600.0
"""A machine is repaired or plugged in within hours, not minutes: tried again after this."""


class UnansweredWakes:
    def __init__(self, metrics: DaemonMetrics) -> None:
        self.metrics = metrics
        self.asked: dict[str, float] = {}
        """Sleeping machine -> when "wake" was first published for it (and it stayed asleep)."""
        self.given_up: dict[str, float] = {}
        """Machine -> until when it is left out of the view."""
        metrics.unwakeable.set_function(lambda: len(self.given_up))

    def screen(self, view: PoolView, now: float) -> PoolView:
        """``view`` without the machines given up on until now."""
        for name in [m for m, until in self.given_up.items() if now >= until]:
            del self.given_up[name]
        if not self.given_up:
            return view
        kept = [mv for mv in view.machines if mv.name not in self.given_up]
        return dataclasses.replace(view, machines=kept)

    def published(self, machines: Mapping[str, MachineAdvice], view: PoolView, now: float) -> None:
        """Note the "wake" advice just published to sleeping machines of ``view``."""
        asked = {}
        for mv in view.machines:
            advice = machines.get(mv.name)
            if mv.state != "sleep" or advice is None or advice.power is not PowerAdvice.WAKE:
                continue  # awake again, or no longer asked to wake
            since = asked[mv.name] = self.asked.get(mv.name, now)
            if now - since >= WAKE_ANSWER_S:
                del asked[mv.name]
                self.given_up[mv.name] = now + WAKE_RETRY_S
                log.warning(
                    "%s was advised to wake %.0f minutes ago and is still asleep: it is left "
                    "out of the advice for %.0f hours (check its wake-on-LAN; AdvisorWakeable "
                    "= false in its configuration keeps the advice from putting it to sleep)",
                    mv.name,
                    (now - since) / 60,
                    WAKE_RETRY_S / 3600,
                )
        self.asked = asked

    def state_dict(self) -> dict[str, Any]:
        return {"asked": dict(self.asked), "given_up": dict(self.given_up)}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.asked = {name: float(t) for name, t in state.get("asked", {}).items()}
        self.given_up = {name: float(t) for name, t in state.get("given_up", {}).items()}
