"""Ranks published as their places in the round's order, which the negotiator compares exactly.

The negotiator rounds ``NEGOTIATOR_PRE_JOB_RANK`` to a 32-bit float (``rank = (float)val`` in
``EvalNegotiatorMatchRank``, matchmaker.cpp), 24 bits of mantissa. A policy's own ranks (a
``frugal`` rank near 90, an idle period's end near 1.8e9 s) weighted above the site's order
leave no bits for the site's best fit, and tell apart only ranks that differ within their first
seven digits. Only the order and the sign of a rank are ever read (the shipped
``NEGOTIATOR_PRE_JOB_RANK`` and ``ADVISOR_ALLOWS``, a job's ``Rank``, condor_rooster's order), so
each is published as its place: a few whole numbers, whose weight ``1e9`` keeps the site's
``- 100000 * Cpus`` exact up to 1,099 places (docs/architecture.md, "Ties").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from plugins.contract.advice import MachineAdvice


def in_places(machines: Mapping[str, MachineAdvice]) -> dict[str, MachineAdvice]:
    """``machines`` with every rank (``AdvisorRank`` and each ``AdvisorRankByPriorHours[k]``)
    replaced by its place among all the ranks of the round: positive ranks 1, 2, ... upwards,
    negative ones -1, -2, ... downwards, 0 stays; equal ranks share a place. A NaN stays, to be
    refused by the encoding as before."""
    ranks = {r for adv in machines.values() for r in _ranks(adv) if not math.isnan(r)}
    place = {0.0: 0.0}
    place.update((r, float(i)) for i, r in enumerate(sorted(r for r in ranks if r > 0), 1))
    below = sorted((r for r in ranks if r < 0), reverse=True)
    place.update((r, -float(i)) for i, r in enumerate(below, 1))
    return {machine: _placed(adv, place) for machine, adv in machines.items()}


def _ranks(adv: MachineAdvice) -> tuple[float, ...]:
    return (adv.rank, *(adv.rank_by_prior_hours or ()))


def _placed(adv: MachineAdvice, place: Mapping[float, float]) -> MachineAdvice:
    by_class = adv.rank_by_prior_hours
    if by_class is not None:
        by_class = tuple(place.get(r, r) for r in by_class)
    return replace(adv, rank=place.get(adv.rank, adv.rank), rank_by_prior_hours=by_class)
