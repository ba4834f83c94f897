"""The live control group in the daemon: per-arm accounting (``arms.py``), its metrics, and the
guard that withholds advice while it costs users more than it saves.

The guard compares the mean overhead of the jobs each arm completed within ``guard_window`` by
Welch's statistic on d = mean(treated) - (1 + margin) * mean(control), with standard error
sqrt(s_t^2 / n_t + (1 + margin)^2 s_c^2 / n_c), once each arm has ``guard_min_jobs`` completions.
It trips when d > 0 at the configured one-sided confidence (z above the normal quantile), and
releases only once the estimate itself no longer exceeds the margin (z <= 0): that gap is the
hysteresis, so advice does not flap on noise. While tripped the daemon publishes neutral advice
(the pool runs as without the advisor) and the policy goes on learning from what it observes.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable, Mapping
from typing import Any

from advisor.daemon.arms import TOTALS, ArmBook
from advisor.daemon.logs import iso
from advisor.daemon.metrics import DaemonMetrics
from plugins.contract.control import ARMS, CONTROL, TREATED
from plugins.contract.machine_split import MachineSplit

log = logging.getLogger("htcondor_advisor.control")


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

    def judge(self, now: float) -> bool:
        """Update the guard on the jobs completed within the window; whether advice is withheld."""
        s = self.settings
        if not s["guard"]:
            return False
        samples = self.book.overheads(now - s["guard_window"])
        treated, control = samples[TREATED], samples[CONTROL]
        if min(len(treated), len(control)) < s["guard_min_jobs"]:
            self.z = None
            return self.withheld  # too little to change its mind either way
        self.z = welch_z(treated, control, s["guard_margin"])
        quantile = statistics.NormalDist().inv_cdf(s["guard_confidence"])
        if not self.withheld and self.z > quantile:
            self.withheld, self.changed_at = True, now
            log.warning(
                "guard: treated jobs' mean overhead %.1f min exceeds the control's %.1f min by "
                "more than %g%% at %g confidence (z %.2f; %d and %d jobs completed since %s): "
                "advice withheld at %s, neutral advice published",
                statistics.fmean(treated) / 60,
                statistics.fmean(control) / 60,
                100 * s["guard_margin"],
                s["guard_confidence"],
                self.z,
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

    def state_dict(self) -> dict[str, Any]:
        return {
            "percent": self.book.percent,
            "book": self.book.state_dict(),
            "withheld": self.withheld,
            "since": self.changed_at,
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.book.load_state(state["book"])
        self.withheld, self.changed_at = bool(state["withheld"]), state["since"]
