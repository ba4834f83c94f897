"""The live control group in the daemon: per-arm accounting (``arms.py``), its metrics, and the
guard that withholds advice while it costs users more than it saves.

The guard compares the mean overhead of the jobs each arm completed within ``guard_window``, once
each arm has ``guard_min_jobs`` completions. It trips only when two tests agree, at the configured
one-sided confidence, that the treated arm's mean exceeds (1 + margin) times the control's:
- Welch's z of d = mean(treated) - (1 + margin) * mean(control), with standard error
  sqrt(s_t^2 / n_t + (1 + margin)^2 s_c^2 / n_c), above the normal quantile: jobs taken as
  independent samples;
- the report's bootstrap (effect.py: days and machines resampled), whose lower bound on the
  ratio treated / control must exceed 1 + margin: jobs of one day or one machine share their
  fate. Judged over a week on a pool of 138 machines under random placement in both arms, Welch
  alone tripped on 3 of 12 days, both together on none (docs/control-group.md).
It releases only once the estimate itself no longer exceeds the margin (z <= 0): that gap is the
hysteresis, so advice does not flap on noise. While tripped the daemon publishes neutral advice
(the pool runs as without the advisor) and the policy goes on learning from what it observes.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from advisor.daemon.arms import TOTALS, ArmBook
from advisor.daemon.effect import resample, sample_of
from advisor.daemon.logs import iso
from advisor.daemon.metrics import DaemonMetrics
from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice
from plugins.contract.control import ARMS, CONTROL, TREATED, arm_of
from plugins.contract.machine_split import MachineSplit

log = logging.getLogger("htcondor_advisor.control")
GUARD_RESAMPLES = 1000
"""Enough for a one-sided 95% bound; asked only in a cycle where Welch's z would trip."""


def welch_z(treated: list[float], control: list[float], margin: float) -> float:
    """Welch's z of mean(treated) - (1 + margin) * mean(control) (each list has two or more)."""
    scale = 1.0 + margin
    d = statistics.fmean(treated) - scale * statistics.fmean(control)
    var = statistics.variance(treated) / len(treated)
    var += scale**2 * statistics.variance(control) / len(control)
    if var <= 0.0:
        return 0.0 if d == 0 else float("inf") if d > 0 else float("-inf")
    return d / var**0.5


class ControlGroup:
    def __init__(self, settings: Mapping[str, Any], metrics: DaemonMetrics | None) -> None:
        self.settings = dict(settings)
        self.book = ArmBook(settings["percent"], settings["keep"])
        self.split = MachineSplit(settings["percent"])
        """The control arm's machines (machine_split.py)."""
        self.withheld = False
        """Whether the guard withholds advice now."""
        self.changed_at: float | None = None
        self.z: float | None = None
        """The guard's last statistic (None: too few completions in the window to judge)."""
        self.lower: float | None = None
        """The bootstrap's lower bound on the overhead ratio when Welch's z last passed."""
        if metrics is not None:
            self._register(metrics)

    def _register(self, metrics: DaemonMetrics) -> None:
        r = metrics.registry
        from prometheus_client import Gauge

        for total in TOTALS:
            gauge = Gauge(
                f"advisor_control_{total}",
                f"Per arm of the control group since the start: {total.replace('_', ' ')}",
                ["arm"],
                registry=r,
            )
            for arm in ARMS:
                gauge.labels(arm).set_function(self._total(arm, total))
        withheld = Gauge(
            "advisor_control_guard_withheld",
            "1 while the guard publishes neutral advice (treated overhead above the control's)",
            registry=r,
        )
        withheld.set_function(lambda: 1.0 if self.withheld else 0.0)

    def _total(self, arm: str, total: str) -> Callable[[], float]:
        return lambda: self.book.totals[arm][total]

    def screened(self, advice: Advice, now: float) -> Advice:
        """``advice`` as published with a control group: no job advice for control jobs, and
        none at all while the guard withholds it (neutral machine advice withdraws it)."""
        pct = self.book.percent
        jobs = {j: a for j, a in advice.jobs.items() if arm_of(j, pct) == TREATED}
        if self.judge(now):
            return Advice(dict.fromkeys(advice.machines, NEUTRAL_MACHINE_ADVICE), {})
        return Advice(advice.machines, jobs)

    def judge(self, now: float) -> bool:
        """Update the guard on the jobs completed within the window; whether advice is withheld."""
        s = self.settings
        if not s["guard"]:
            self.withheld = False  # (a guard turned off lets go of what it withheld)
            return False
        samples = self.book.overheads(now - s["guard_window"])
        treated, control = samples[TREATED], samples[CONTROL]
        if min(len(treated), len(control)) < s["guard_min_jobs"]:
            self.z = None
            return self.withheld  # too little to change its mind either way
        self.z = welch_z(treated, control, s["guard_margin"])
        quantile = statistics.NormalDist().inv_cdf(s["guard_confidence"])
        if not self.withheld and self.z > quantile and self._clustered_too(now):
            self.withheld, self.changed_at = True, now
            log.warning(
                "guard: treated jobs' mean overhead %.1f min exceeds the control's %.1f min by "
                "more than %g%% at %g confidence (z %.2f, ratio at least %.2f; %d and %d jobs "
                "completed since %s): advice withheld at %s, neutral advice published",
                statistics.fmean(treated) / 60,
                statistics.fmean(control) / 60,
                100 * s["guard_margin"],
                s["guard_confidence"],
                self.z,
                self.lower,
                len(treated),
                len(control),
                iso(now - s["guard_window"]),
                iso(now),
            )
        elif self.withheld and self.z <= 0.0:
            self.withheld, self.changed_at = False, now
            log.warning(
                "guard: treated jobs' overhead no longer exceeds the control's by %g%% (z %.2f): "
                "advice resumes at %s",
                100 * s["guard_margin"],
                self.z,
                iso(now),
            )
        return self.withheld

    def _clustered_too(self, now: float) -> bool:
        """Whether the bootstrap's lower bound on the overhead ratio also passes the margin."""
        s = self.settings
        since = now - s["guard_window"]
        window = [sample_of(row) for row in self.book.ended if row[0] >= since]
        done = [x for x in window if x[2] and x[3] is not None]
        ratios = resample(done, resamples=GUARD_RESAMPLES).ratios[1]
        self.lower = float(np.quantile(ratios, 1.0 - s["guard_confidence"]))
        return self.lower > 1.0 + s["guard_margin"]

    def state_dict(self) -> dict[str, Any]:
        return {
            "percent": self.book.percent,
            "book": self.book.state_dict(),
            "withheld": self.withheld,
            "since": self.changed_at,
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        """The arms' figures as saved, unless they were of another split: a new percent is a new
        experiment, and counting on would mix the two splits' jobs in each arm."""
        if state["percent"] != self.book.percent:
            log.warning(
                "control.percent is now %g%%, the saved arms were of a %g%% split: the arms' "
                "figures start anew (the earlier ones stay in the older snapshots)",
                self.book.percent,
                state["percent"],
            )
            return
        self.book.load_state(state["book"])
        self.withheld, self.changed_at = bool(state["withheld"]), state["since"]
