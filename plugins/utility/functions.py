"""Time-utility (paper 002, eq. 1-3) and fair-share utility (eq. 4) functions.

Times are in seconds; the paper's constants are per minute (alpha 0.5 per minute, sigma 1 minute),
which reproduces its own reading: an interactive job is down to 0.5 utility 1.39 minutes after its
deadline, a batch job when its turnaround is about 10 times its execution time.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

INTERACTIVE_LIMIT_S = 900.0
"""Jobs shorter than 15 minutes are interactive (paper 002, sec. V-B)."""
MINUTE = 60.0


def is_interactive(runtime_s: float) -> bool:
    return runtime_s < INTERACTIVE_LIMIT_S


def time_utility(
    turnaround_s: np.ndarray | float,
    runtime_s: np.ndarray | float,
    interactive: np.ndarray | bool,
    *,
    alpha: float = 0.5,
    beta: float = 0.3,
    sigma_min: float = 1.0,
) -> np.ndarray:
    """U_j(t) with ``turnaround_s = t - a_j``: 1 up to the deadline d_j = tau_j + sigma (eq. 1),
    then exp(-alpha (t - a_j - d_j)) for interactive jobs (eq. 2) and ((t - a_j)/d_j)^-beta for
    batch jobs (eq. 3)."""
    turnaround = np.asarray(turnaround_s, dtype=np.float64)
    deadline = np.asarray(runtime_s, dtype=np.float64) + sigma_min * MINUTE
    late = np.maximum(turnaround - deadline, 0.0)
    interactive_u = np.exp(-alpha * late / MINUTE)  # eq. 2 (eq. 1 when late == 0)
    ratio = np.maximum(turnaround / np.maximum(deadline, 1e-9), 1.0)
    batch_u = ratio**-beta  # eq. 3 (eq. 1 when ratio <= 1)
    return np.where(interactive, interactive_u, batch_u)


def deficit_distance(shares: Mapping[str, float], received: Mapping[str, float]) -> float:
    """D = max_k (w_k - S_k)_+ over the groups with a share (paper 002, sec. IV-B)."""
    return max((max(w - received.get(k, 0.0), 0.0) for k, w in shares.items()), default=0.0)


def fairness_utility(shares: Mapping[str, float], received: Mapping[str, float]) -> float:
    """F = 1 - D / M with M = max_k w_k the largest possible unfairness (paper 002, eq. 4)."""
    top = max(shares.values(), default=0.0)
    if top <= 0.0:
        return 1.0
    return 1.0 - deficit_distance(shares, received) / top


def received_fractions(service: Mapping[str, float]) -> dict[str, float]:
    """S_k: each group's fraction of the total service delivered so far."""
    total = sum(service.values())
    if total <= 0.0:
        return dict.fromkeys(service, 0.0)
    return {k: v / total for k, v in service.items()}


def parse_shares(text: str) -> dict[str, float]:
    """``"vo0=0.7,vo1=0.2"`` -> {"vo0": 0.7, "vo1": 0.2}; empty text means no shares."""
    shares: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"expected GROUP=WEIGHT items separated by commas, got {item!r}")
        shares[name.strip()] = float(value)
    return shares


def check_shares(shares: Mapping[str, float]) -> str | None:
    """A problem with the shares, for ``Option.check``."""
    if any(w < 0 for w in shares.values()):
        return "weights must be >= 0 (e.g. vo0=0.7,vo1=0.3)"
    return None
