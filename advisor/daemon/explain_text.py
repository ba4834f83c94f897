"""``explain`` for people: short aligned sections; every time in ISO 8601 UTC with how long ago
(or until) it is, owner sessions apart from power changes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from advisor.condor.attributes import classad_literal
from advisor.daemon.logs import iso
from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.control import CONTROL

ATTRIBUTE_ORDER = (
    "AdvisorRankByPriorHours",
    "AdvisorRank",
    "AdvisorHold",
    "AdvisorPower",
    "AdvisorPredictedIdle",
    "AdvisorUpdated",
    "AdvisorExpires",
    "AdvisorPolicy",
)
EVENT_FIELDS = {"kind", "machine", "time", "time_iso", "started", "started_iso"}


def duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 12 min``, ``2 d 4 h``: to the largest two units."""
    s = round(abs(seconds))
    if s < 60:
        return f"{s} s"
    hours, minutes = divmod(s // 60, 60)
    if not hours:
        return f"{minutes} min"
    days, hours = divmod(hours, 24)
    big, small = (f"{days} d", f"{hours} h") if days else (f"{hours} h", f"{minutes} min")
    return big if small.startswith("0 ") else f"{big} {small}"


def ago(t: float, now: float) -> str:
    """``3 h 12 min ago``, ``in 5 min`` or ``now``."""
    if abs(now - t) < 0.5:
        return "now"
    return f"{duration(now - t)} ago" if now > t else f"in {duration(t - now)}"


def when(t: float, now: float) -> str:
    return f"{iso(t)} ({ago(t, now)})"


def spans(ks: Sequence[int]) -> str:
    """``0-3, 5, 7-23``: consecutive classes as one span."""
    out: list[str] = []
    for i, k in enumerate(ks):
        if i and ks[i - 1] == k - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{k}"
        else:
            out.append(str(k))
    return ", ".join(out)


def by_index(values: Sequence[Any], show: Callable[[Any], str]) -> str:
    """A row by index, equal neighbours merged: ``0-2: 4.0 | 3: 2.73 | 4-23: -1.0``."""
    groups: list[list[int]] = []
    for i, v in enumerate(values):
        if groups and values[groups[-1][0]] == v:
            groups[-1].append(i)
        else:
            groups.append([i])
    span = [f"{g[0]}-{g[-1]}" if len(g) > 1 else str(g[0]) for g in groups]
    return " | ".join(f"{s}: {show(values[g[0]])}" for s, g in zip(span, groups, strict=True))


def show(value: Any) -> str:
    """A policy's value in a few characters (``--json`` has it exactly)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return repr(float(f"{value:.6g}") + 0.0)  # + 0.0: no "-0.0"
    if isinstance(value, list) and len(value) == PRIOR_HOURS_CLASSES:  # a row: a value per class
        return by_index(value, show)
    if isinstance(value, list) and all(isinstance(v, int | float | str) for v in value):
        return ", ".join(map(show, value)) or "none"
    if isinstance(value, Mapping) and not _nested(value):
        return " | ".join(f"{k}: {show(v)}" for k, v in value.items()) or "none"
    return value if isinstance(value, str) else json.dumps(value)


def aligned(rows: Sequence[tuple[str, str]], indent: str = "  ") -> list[str]:
    width = max((len(label) for label, _ in rows), default=0)
    return [f"{indent}{label:<{width}}  {text}".rstrip() for label, text in rows]


def kept_off(classes: Mapping[str, Any]) -> str:
    """The job classes line in plain words."""
    arm = classes.get("arm")
    if arm == CONTROL:
        return "a control machine (AdvisorControl is true): takes control jobs only, every class"
    said = _classes_kept_off(classes)
    return f"treated jobs only (AdvisorControl is false): {said}" if arm is not None else said


def _classes_kept_off(classes: Mapping[str, Any]) -> str:
    if classes["kept_off_every_class"]:
        why = "AdvisorHold is true" if classes["by"] == "AdvisorHold" else "every rank is negative"
        return f"kept off every job class ({why})"
    if not classes["kept_off"]:
        return "open to every job class"
    return f"open to {spans(classes['open'])}; kept off {spans(classes['kept_off'])}"


def advice_section(data: Mapping[str, Any]) -> list[str]:
    attrs, now = data["published"], data["now"]
    lines = [
        "published advice (ranks as their places in the advice's order; "
        "job class k: the job's longest earlier attempt, k hours)"
    ]
    if attrs is None:
        return [*lines, "  none: neutral, the pool behaves as without the advisor"]
    covered = len(attrs.get("AdvisorRankByPriorHours") or ()) >= PRIOR_HOURS_CLASSES
    rows = []
    for name in [*ATTRIBUTE_ORDER, *(a for a in attrs if a not in ATTRIBUTE_ORDER)]:
        value = attrs.get(name)
        if value is None:
            continue
        if name == "AdvisorRankByPriorHours":
            text = by_index(value, classad_literal)
        elif name in ("AdvisorUpdated", "AdvisorExpires"):
            text = when(value, now)
        elif name == "AdvisorPredictedIdle":
            text = f"{classad_literal(value)} s ({duration(value)})"
        else:
            text = classad_literal(value)
        if name == "AdvisorRank" and covered:
            text += " (not read: AdvisorRankByPriorHours covers every class)"
        rows.append((name, text))
    rows.insert(1, ("job classes", kept_off(data["job_classes"])))  # under the ranks it reads
    return [*lines, *aligned(rows)]


def said_section(data: Mapping[str, Any]) -> list[str]:
    said = data["policy_says"]
    lines = [f"what {data['policy']} says of it"]
    if said is None:
        return [*lines, f"  unavailable: {data.get('policy_says_unavailable', 'not asked')}"]
    if not said:
        return [*lines, "  nothing beyond the state naming the machine (below)"]

    def section(values: Mapping[str, Any], indent: str) -> list[str]:
        flat = [(str(k), show(v)) for k, v in values.items() if not _nested(v)]
        out = aligned(flat, indent)
        for key, value in values.items():
            if _nested(value):
                out += [f"{indent}{key}", *section(value, indent + "  ")]
        return out

    return [*lines, *section(said, "  ")]


def _nested(value: Any) -> bool:
    """A mapping holding mappings or lists: a section of its own, not one line."""
    return isinstance(value, Mapping) and any(isinstance(v, Mapping | list) for v in value.values())


def sessions(events: Sequence[Mapping[str, Any]], now: float) -> list[str]:
    """Owner sessions as spans: start to end and how long, from the recent events kept."""
    rows: list[tuple[str, str]] = []
    start: float | None = None
    for e in events:
        if e["kind"] == "OwnerSessionStarted":
            if start is not None:
                rows.append((f"{iso(start)} to (no end seen)", f"began {ago(start, now)}"))
            start = e["time"]
        else:
            begin = "(before the events kept)" if start is None else iso(start)
            length = "" if start is None else f"{duration(e['time'] - start)}, "
            rows.append((f"{begin} to {iso(e['time'])}", f"{length}ended {ago(e['time'], now)}"))
            start = None
    if start is not None:
        rows.append((f"{iso(start)} to now", f"{duration(now - start)} so far"))
    return aligned(rows) or ["  none"]


def recent(events: Sequence[Any]) -> str:
    return f"{len(events)} recent event{'' if len(events) == 1 else 's'}"


def attempt(e: Mapping[str, Any], now: float) -> tuple[str, str]:
    what = f"{'started' if e['kind'] == 'AttemptStarted' else 'ended'} job {e.get('job_id')}"
    if e["kind"] == "AttemptEnded":
        what += f" {e.get('outcome')} after {duration(e['time'] - e['started'])}"
    rest = {k: v for k, v in e.items() if k not in EVENT_FIELDS | {"job_id", "outcome"}}
    extra = "".join(f", {k} {show(v)}" for k, v in rest.items())
    return iso(e["time"]), f"{what}{extra} ({ago(e['time'], now)})"


def format_explanation(data: Mapping[str, Any]) -> str:
    """The explanation for people: a head, then one short section per question."""
    now, machine = data["now"], data["machine"]
    cluster = f" (cluster {data['cluster']})" if data.get("cluster") else ""
    head = [("machine", f"{machine}{cluster}"), ("policy", data["policy"]), ("as of", iso(now))]
    lines = [*aligned(head, ""), "", *advice_section(data), "", *said_section(data), ""]
    values = data["policy_values"]
    lines.append(f"{data['policy']} state naming {machine} ({len(values)})")
    lines += aligned([(v["path"], show(v["value"])) for v in values]) or ["  none"]
    owner, power = data["owner_sessions"], data["power_changes"]
    lines += ["", f"owner sessions ({recent(owner)})"]
    lines += sessions(owner, now)
    lines += ["", f"power changes ({len(power)} recent)"]
    lines += aligned([(iso(e["time"]), f"{e.get('state')} ({ago(e['time'], now)})") for e in power])
    lines += [] if power else ["  none"]
    attempts = data["job_attempts"]
    lines += ["", f"job attempts ({recent(attempts)})"]
    lines += aligned([attempt(e, now) for e in attempts]) or ["  none"]
    return "\n".join(lines)
