"""Advice as the ``Advisor*`` ClassAd attributes (docs/architecture.md section 3) and hook lines.

One definition serves the collector merge (a ClassAd), the HTTP endpoint and the STARTD_CRON hook
(``Attr = value`` lines): the attribute names and their encoding cannot drift apart.
"""

from __future__ import annotations

import json
import math

from plugins.contract.advice import PRIOR_HOURS_CLASSES, MachineAdvice
from plugins.contract.control import CONTROL

Value = bool | float | str | list[float]

ADVISOR_PREFIX = "Advisor"


def advice_attributes(
    advice: MachineAdvice, updated: float, expires: float, policy: str
) -> dict[str, Value]:
    """The published attributes for one machine; optional ones only when the advice has them."""
    attrs: dict[str, Value] = {
        "AdvisorRank": float(advice.rank),
        "AdvisorHold": bool(advice.hold),
        "AdvisorPower": str(advice.power),
        "AdvisorUpdated": float(updated),
        "AdvisorExpires": float(expires),
        "AdvisorPolicy": policy,
    }
    # Always published whole, AdvisorRank for every class when the advice ranks none apart:
    # START reads a name the machine ad lacks from the job ad, where a job's own list would
    # override the machine's rank; a class past a short list's end reads its last rank
    # (rank_for), where the shipped expressions would fall back to AdvisorRank.
    ranks = [float(r) for r in advice.rank_by_prior_hours or (advice.rank,)]
    attrs["AdvisorRankByPriorHours"] = ranks + ranks[-1:] * (PRIOR_HOURS_CLASSES - len(ranks))
    if advice.predicted_idle_s is not None and math.isfinite(advice.predicted_idle_s):
        attrs["AdvisorPredictedIdle"] = float(advice.predicted_idle_s)
    if advice.arm is not None:  # a control group's split (plugins/contract/machine_split.py)
        attrs["AdvisorControl"] = advice.arm == CONTROL
    return attrs


def classad_literal(value: Value) -> str:
    """``value`` as ClassAd expression text (what ``condor_status -long`` would show)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot publish a non-finite number: {value}")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "{ " + ", ".join(classad_literal(float(v)) for v in value) + " }"


def attribute_lines(attrs: dict[str, Value]) -> str:
    """``Attr = value`` lines, the STARTD_CRON hook output format."""
    return "".join(f"{name} = {classad_literal(value)}\n" for name, value in attrs.items())
