"""Which machines an answer speaks to, and what each was told: the ledger's per-machine input."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from plugins.contract.advice import Advice
from plugins.contract.ledger import Filed
from plugins.contract.policy import MachineView


def what_was_told(
    advice: Advice,
    asked: Sequence[MachineView],
    numbers: Sequence[int],
    index: Mapping[str, int],
) -> list[tuple[int, Filed | None]]:
    """(machine number, its advice or the name it follows, or None: neutral), in filing order.

    Each machine asked (``asked``, numbered ``numbers``): its own advice, else the name it is
    told to follow, else the name its view says it follows (a machine left out of the answer
    keeps following; with no name it is neutral). Then the machines answered without being
    asked (``index`` numbers them; one the driver does not know is left out), follows before own
    advice (the later wins)."""
    given, follows = advice.machines, advice.follows
    told: list[tuple[int, Filed | None]] = [
        (m, given.get(mv.name) or follows.get(mv.name) or mv.follows)
        for m, mv in zip(numbers, asked, strict=True)
    ]
    if given or follows:  # (most rounds of most policies answer nothing)
        already = set(numbers)
        for answer in (follows, given):
            for name, adv in answer.items():
                m = index.get(name)
                if m is not None and m not in already:
                    told.append((m, adv))
    return told
