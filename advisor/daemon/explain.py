"""Why a machine has its advice: the policy's learned values that name it, the advice itself
(with its predicted idle time), and its recent owner sessions and job attempts.

Policies keep their own state layouts, so the values are found generically: every entry of the
policy's ``state_dict`` keyed by the machine's name, with the path that leads to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from advisor.daemon.logs import iso

OWNER_KINDS = ("OwnerSessionStarted", "OwnerSessionEnded", "MachinePowerChanged")
ATTEMPT_KINDS = ("AttemptStarted", "AttemptEnded")


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


def explain_machine(
    machine: str,
    snapshot: Mapping[str, Any],
    advice: Mapping[str, Any] | None,
    now: float,
) -> dict[str, Any]:
    """The explanation as JSON-compatible data (what ``explain`` prints)."""
    recent = list(snapshot.get("recent", {}).get(machine, []))
    policy = snapshot["policy"]
    return {
        "machine": machine,
        "now": now,
        "policy": policy["label"],
        "advice": advice,
        "predicted_idle_s": None if advice is None else advice.get("predicted_idle_s"),
        "policy_values": values_naming(policy["state"], machine),
        "owner_sessions": [e for e in recent if e["kind"] in OWNER_KINDS],
        "job_attempts": [e for e in recent if e["kind"] in ATTEMPT_KINDS],
    }


def format_explanation(data: Mapping[str, Any]) -> str:
    """The explanation for people: one fact a line."""
    lines = [f"machine      {data['machine']}", f"policy       {data['policy']}"]
    advice = data["advice"]
    if advice is None:
        lines.append("advice       none (neutral: the pool behaves as without the advisor)")
    else:
        lines.append(
            f"advice       rank {advice['rank']}, hold {advice['hold']}, power {advice['power']},"
            f" expires {iso(advice['expires'])}"
        )
    idle = data["predicted_idle_s"]
    lines.append(f"predicted    {'unknown' if idle is None else f'{idle / 60:.1f} min idle'}")
    values = data["policy_values"]
    lines.append(f"policy values ({len(values)})")
    lines += [f"  {v['path']} = {v['value']}" for v in values] or ["  none name this machine"]
    for title, key in (
        ("owner sessions and power", "owner_sessions"),
        ("job attempts", "job_attempts"),
    ):
        events = data[key]
        lines.append(f"recent {title} ({len(events)})")
        for e in events:
            rest = {k: v for k, v in e.items() if k not in ("kind", "time", "machine")}
            extra = " ".join(f"{k}={v}" for k, v in rest.items())
            lines.append(f"  {iso(e['time'])} {e['kind']} {extra}".rstrip())
    return "\n".join(lines)
