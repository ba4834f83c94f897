"""Why a machine has its advice: the advice as published (its ``Advisor*`` attributes, through the
encoder every sink uses), the job classes it keeps off, what the policy says of the machine (its
``explain`` hook: e.g. the values of the machine's cluster), the policy's learned values that name
it, and its recent owner sessions, power changes and job attempts.

Policies keep their own state layouts, so the values naming the machine are found generically:
every entry of the policy's ``state_dict`` keyed by the machine's name, with the path that leads
to it. The text form is ``advisor.daemon.explain_text``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from advisor.condor.attributes import Value, advice_attributes
from advisor.daemon.logs import iso
from plugins.contract.advice import PRIOR_HOURS_CLASSES, MachineAdvice, PowerAdvice

OWNER_KINDS = ("OwnerSessionStarted", "OwnerSessionEnded")
POWER_KINDS = ("MachinePowerChanged",)
ATTEMPT_KINDS = ("AttemptStarted", "AttemptEnded")
TIMES = ("time", "started")
"""Event fields that are times (each gets an ISO 8601 twin, ``time_iso``)."""
SHOWN_KNOWN = 5


class UnknownMachine(LookupError):
    """``explain`` of a machine the view read never showed (a typo, or another pool): the
    endpoint answers 404 and the command exits 2, rather than explain a machine that is not."""

    def __init__(self, machine: str, known: Iterable[str], where: str) -> None:
        self.machine, self.known, self.where = machine, sorted(known), where
        super().__init__(unknown_message(machine, self.known, where))

    def as_json(self) -> dict[str, Any]:
        """The endpoint's 404 body: the message, and every known machine."""
        return {
            "error": str(self),
            "machine": self.machine,
            "where": self.where,
            "known": self.known,
        }


def unknown_message(machine: str, known: Sequence[str], where: str) -> str:
    """One line: the machine, a few known names (the closest first) and how many there are."""
    head = f"no machine {machine!r} in {where}"
    if not known:
        return f"{head}; it knows no machines yet (has it seen the pool?)"
    close = difflib.get_close_matches(machine, known, n=SHOWN_KNOWN)
    shown = [*close, *(m for m in known if m not in close)][:SHOWN_KNOWN]
    more = " ..." if len(known) > len(shown) else ""
    return f"{head}; known: {', '.join(shown)}{more} ({len(known)} machines)"


def values_naming(state: Any, machine: str, path: str = "") -> list[dict[str, Any]]:
    """Every ``(path, value)`` in ``state`` stored under the key ``machine``."""
    found: list[dict[str, Any]] = []
    if isinstance(state, Mapping):
        for key, value in state.items():
            where = f"{path}.{key}" if path else str(key)
            if key == machine:
                found.append({"path": where, "value": value})
            else:
                found.extend(values_naming(value, machine, where))
    elif isinstance(state, list) and len(state) < 100_000:
        for i, value in enumerate(state):
            found.extend(values_naming(value, machine, f"{path}[{i}]"))
    return found


def advice_of(advice: Mapping[str, Any]) -> MachineAdvice:
    """The advice the board's JSON (``board.as_json``) was made from."""
    ranks = advice.get("rank_by_prior_hours")
    return MachineAdvice(
        rank=advice["rank"],
        rank_by_prior_hours=None if ranks is None else tuple(ranks),
        hold=advice["hold"],
        predicted_idle_s=advice["predicted_idle_s"],
        power=PowerAdvice(advice["power"]),
        arm=advice.get("arm"),  # absent from a snapshot written before the arm was kept
    )


def published(advice: Mapping[str, Any] | None) -> dict[str, Value] | None:
    """The ``Advisor*`` attributes a sink publishes for this advice (None: nothing is)."""
    if advice is None:
        return None
    value = advice_of(advice)
    return advice_attributes(value, advice["updated"], advice["expires"], advice["policy"])


def class_rank(value: MachineAdvice, k: int) -> float:
    """The rank class-k jobs see, as the shipped ``ADVISOR_RANK`` reads the attributes
    (``deploy/common/40-htcondor-advisor-expressions.conf``): ``AdvisorRankByPriorHours[k]``
    when the list is that long, else ``AdvisorRank``."""
    ranks = value.rank_by_prior_hours
    return ranks[k] if ranks is not None and len(ranks) > k else value.rank


def job_classes(advice: Mapping[str, Any] | None) -> dict[str, Any]:
    """Which prior-hours classes the advice keeps off the machine (``ADVISOR_ALLOWS``: a negative
    rank for the class, or ``AdvisorHold``); no advice keeps none off. With a control group,
    ``arm`` says whose jobs the machine takes (``ADVISOR_ARM_OK``): a control machine's hold
    keeps the treated jobs off, while control jobs ignore the advice and take it."""
    classes = range(PRIOR_HOURS_CLASSES)
    if advice is None:
        return {
            "open": list(classes),
            "kept_off": [],
            "kept_off_every_class": False,
            "by": None,
            "arm": None,
        }
    value = advice_of(advice)
    off = [k for k in classes if value.hold or class_rank(value, k) < 0]
    by = "AdvisorRankByPriorHours" if value.rank_by_prior_hours is not None else "AdvisorRank"
    return {
        "open": [k for k in classes if k not in off],
        "kept_off": off,
        "kept_off_every_class": len(off) == PRIOR_HOURS_CLASSES,
        "by": "AdvisorHold" if value.hold else by if off else None,
        "arm": value.arm,
    }


def with_iso(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with an ISO 8601 twin of each time it holds (``time`` -> ``time_iso``)."""
    out = dict(record)
    for key in TIMES:
        if isinstance(record.get(key), int | float):
            out[f"{key}_iso"] = iso(record[key])
    return out


def explain_machine(
    machine: str,
    snapshot: Mapping[str, Any],
    advice: Mapping[str, Any] | None,
    now: float,
    said: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The explanation as JSON-compatible data (what ``explain --json`` prints): times in
    seconds since the epoch, each with an ISO 8601 twin. ``said``: the policy's ``explain``
    (None: the policy could not be asked)."""
    recent = [with_iso(e) for e in snapshot.get("recent", {}).get(machine, [])]
    info: Mapping[str, Any] = next(
        (m for m in snapshot.get("machines", []) if m["name"] == machine), {}
    )
    policy = snapshot["policy"]
    if advice is not None:
        advice = {
            **advice,
            "updated_iso": iso(advice["updated"]),
            "expires_iso": iso(advice["expires"]),
        }
    return {
        "machine": machine,
        "cluster": info.get("cluster"),
        "now": now,
        "now_iso": iso(now),
        "policy": policy["label"],
        "advice": advice,
        "published": published(advice),
        "job_classes": job_classes(advice),
        "predicted_idle_s": None if advice is None else advice.get("predicted_idle_s"),
        "policy_says": None if said is None else dict(said),
        "policy_values": values_naming(policy["state"], machine),
        "owner_sessions": [e for e in recent if e["kind"] in OWNER_KINDS],
        "power_changes": [e for e in recent if e["kind"] in POWER_KINDS],
        "job_attempts": [e for e in recent if e["kind"] in ATTEMPT_KINDS],
    }
