"""Ranks are published as their places in the round's order: the order and the sign the shipped
expressions read are kept exactly, in numbers the negotiator's 32-bit float keeps apart."""

from __future__ import annotations

import math

from advisor.condor.rank_places import in_places
from plugins.contract.advice import MachineAdvice


def test_places_keep_the_order_and_the_sign_and_equal_ranks_share_one() -> None:
    advice = {
        "a": MachineAdvice(rank=1.7e9 + 60),
        "b": MachineAdvice(rank=1.7e9),
        "c": MachineAdvice(rank=0.25, rank_by_prior_hours=(1.7e9, -1.0, 0.0, -0.5)),
        "d": MachineAdvice(rank=-1.0, hold=True),
        "e": MachineAdvice(),
    }
    placed = in_places(advice)
    assert {m: a.rank for m, a in placed.items()} == {"a": 3, "b": 2, "c": 1, "d": -2, "e": 0}
    assert placed["c"].rank_by_prior_hours == (2.0, -2.0, 0.0, -1.0)
    assert placed["d"].hold and placed["e"] == MachineAdvice()


def test_a_round_whose_order_does_not_change_publishes_the_same_places() -> None:
    # the startds' If_Changed updates: new values in the same order change no attribute
    before = in_places({"a": MachineAdvice(rank=90.1), "b": MachineAdvice(rank=80.0)})
    after = in_places({"a": MachineAdvice(rank=91.7), "b": MachineAdvice(rank=79.2)})
    assert before == after


def test_a_nan_rank_is_left_for_the_encoding_to_refuse() -> None:
    placed = in_places({"a": MachineAdvice(rank=math.nan), "b": MachineAdvice(rank=2.0)})
    assert math.isnan(placed["a"].rank) and placed["b"].rank == 1.0
