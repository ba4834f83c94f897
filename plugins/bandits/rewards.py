"""The reward of one placement decision (paper 000 eq. 4) and the energy term (eq. 5)."""

from __future__ import annotations

from plugins.contract.events import AttemptOutcome


def energy_scale(watts: float, best_watts: float, worst_watts: float) -> float:
    """Eq. 5: ``E_a = (e_a - e_b) / (e_w - e_b)``; 0 for the most efficient machine, 1 the worst."""
    if worst_watts <= best_watts:
        return 0.0
    return (watts - best_watts) / (worst_watts - best_watts)


def placement_reward(outcome: AttemptOutcome, energy: float, sigma: float) -> float:
    """Eq. 4 for a job sent to a machine: ``+1 - sigma E_a`` when it completed there, else
    ``-1 + sigma (1 - E_a)`` (evicted by the owner or a reboot, removed, held)."""
    if outcome is AttemptOutcome.COMPLETED:
        return 1.0 - sigma * energy
    return -1.0 + sigma * (1.0 - energy)


def queue_reward(could_have_run: bool) -> float:
    """Eq. 4 for a job left in the queue: -1 when a machine free at the decision stayed free long
    enough to run it to completion (judged in hindsight), +1 when none did."""
    return -1.0 if could_have_run else 1.0
