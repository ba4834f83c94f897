"""The ``control:`` section: the live control group and its guard (docs/control-group.md)."""

from __future__ import annotations

from typing import Any

from advisor.daemon import fields as f
from advisor.daemon.pools import Key


def _fraction(lo: float, hi: float) -> Any:
    return lambda v, p: f.number(v, p, lo=lo, hi=hi)


CONTROL_KEYS: dict[str, Key] = {
    "percent": Key(
        lambda v, p: f.integer(v, p, lo=0, hi=99),
        0,
        "jobs matched without advice, by a hash of their id: the pool's ADVISOR_CONTROL_PERCENT "
        "(0: no control group)",
    ),
    "guard": Key(f.boolean, True, "withhold advice while it costs the treated jobs overhead"),
    "guard_margin": Key(
        _fraction(0.0, 10.0),
        0.1,
        "withhold when the treated mean overhead exceeds (1 + this) x the control's",
    ),
    "guard_confidence": Key(
        _fraction(0.5, 0.9999), 0.95, "one-sided confidence the guard needs to withhold"
    ),
    "guard_window": Key(f.duration, 7 * f.DAY_S, "jobs completed this recently are judged"),
    "guard_min_jobs": Key(
        lambda v, p: f.integer(v, p, lo=2, hi=1_000_000),
        30,
        "completed jobs each arm needs in the window before the guard judges",
    ),
    "keep": Key(f.duration, 28 * f.DAY_S, "how long ended jobs are kept for the report"),
}
