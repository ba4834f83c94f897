"""Options of the idle-time policies (``--set key=value``)."""

from __future__ import annotations

from plugins.contract.policy import Option
from plugins.idle.features import BEST_FEATURES, FEATURES

GROUPS = ("machine", "cluster", "pool")


def _feature_list(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in FEATURES]
    if unknown or not names:
        raise ValueError(
            f"unknown features {unknown or '(none given)'}; choose from {', '.join(FEATURES)}"
        )
    return names


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be > 0"


def _group(value: str) -> str | None:
    return None if value in GROUPS else f"must be one of {', '.join(GROUPS)}"


IDLE_OPTIONS = {
    "delta_min": Option(
        10.0, float, "minutes between synthetic samples (paper best: 10)", _positive
    ),
    "features": Option(
        BEST_FEATURES, _feature_list, "comma-separated feature subset (default: paper's best)"
    ),
    "group": Option("machine", str, "one model per machine, cluster or pool", _group),
    "max_samples": Option(500, int, "training samples per model (uniform subsample)", _positive),
    "trees": Option(10, int, "RandomForest trees", _positive),
    "max_depth": Option(10, int, "RandomForest depth limit", _positive),
    "mlp_epochs": Option(20, int, "MLP training epochs (Adam)", _positive),
}
