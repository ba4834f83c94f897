"""Paper 002's utility functions (eq. 1-4) against values computed by hand."""

from __future__ import annotations

import math

import pytest

from plugins.utility.functions import (
    deficit_distance,
    fairness_utility,
    parse_shares,
    received_fractions,
    time_utility,
)

MIN = 60.0


def test_both_classes_keep_full_utility_until_the_deadline() -> None:
    # d_j = tau_j + sigma = 5 min + 1 min; finishing at 6 min is on time (eq. 1)
    for interactive in (True, False):
        assert time_utility(6 * MIN, 5 * MIN, interactive) == pytest.approx(1.0)
        assert time_utility(5 * MIN, 5 * MIN, interactive) == pytest.approx(1.0)


def test_interactive_utility_decays_exponentially_after_the_deadline() -> None:
    # eq. 2: two minutes late with alpha 0.5 per minute -> e^-1
    assert time_utility(8 * MIN, 5 * MIN, True) == pytest.approx(math.exp(-1.0))
    # the paper's reading: half utility ln(2)/alpha = 1.386 minutes after the deadline
    assert time_utility(6 * MIN + math.log(2) / 0.5 * MIN, 5 * MIN, True) == pytest.approx(0.5)


def test_batch_utility_follows_a_power_law_of_the_turnaround_ratio() -> None:
    # eq. 3: turnaround 10 d_j with beta 0.3 -> 10^-0.3 = 0.501187
    d = 60 * MIN + 1 * MIN
    assert time_utility(10 * d, 60 * MIN, False) == pytest.approx(0.5011872336)
    assert time_utility(2 * d, 60 * MIN, False, beta=1.0) == pytest.approx(0.5)


def test_sigma_and_alpha_are_honoured() -> None:
    # sigma 3 min: a 1-minute job is due at 4 min; one minute late with alpha 1 -> e^-1
    assert time_utility(5 * MIN, 1 * MIN, True, alpha=1.0, sigma_min=3.0) == pytest.approx(
        math.exp(-1.0)
    )


def test_deficit_distance_is_the_largest_positive_shortfall() -> None:
    shares = {"a": 0.7, "b": 0.2, "c": 0.05, "d": 0.05}
    assert deficit_distance(shares, {"a": 0.6, "b": 0.3, "c": 0.05, "d": 0.05}) == pytest.approx(
        0.1
    )
    assert deficit_distance(shares, {"a": 0.7, "b": 0.2, "c": 0.05, "d": 0.05}) == 0.0
    assert deficit_distance(shares, {"a": 0.9, "b": 0.1}) == pytest.approx(0.1)  # b, c, d behind


def test_fairness_utility_of_the_infeasible_case_is_the_papers_0_625() -> None:
    # sec. VI-B: targets .4/.2/.2/.2, actual .7/.2/.05/.05: D = 0.15, M = 0.4 -> F = 0.625
    shares = {"a": 0.4, "b": 0.2, "c": 0.2, "d": 0.2}
    got = received_fractions({"a": 70.0, "b": 20.0, "c": 5.0, "d": 5.0})
    assert fairness_utility(shares, got) == pytest.approx(0.625)


def test_shares_parse_and_reject_bad_items() -> None:
    assert parse_shares("vo0=0.7, vo1=0.3") == {"vo0": 0.7, "vo1": 0.3}
    assert parse_shares("") == {}
    with pytest.raises(ValueError, match="GROUP=WEIGHT"):
        parse_shares("vo0:0.7")
