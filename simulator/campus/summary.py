"""The figures of a replay: ``summary.json``, ``jobs.csv`` and a table for people.

Overhead of a job = finish - submit - execution time (paper 004 sec. V-F); good energy = the attempt
that completed; wasted = every other attempt (evicted, removed); attempts still running when the
trace ends are reported apart as ``in_flight``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from plugins.contract.control import ARMS, CONTROL, TREATED
from simulator.campus.job_book import DONE, REMOVED
from simulator.campus.replay import ReplayResult

MWH = 1e6


def _month_rows(result: ReplayResult) -> list[dict[str, Any]]:
    rows = []
    for label, v in result.months.rows():
        completed = v.get("completed", 0.0)
        rows.append(
            {
                "month": label,
                "jobs_submitted": int(v.get("submitted", 0)),
                "jobs_completed": int(completed),
                "evictions_owner": int(v.get("evictions_owner", 0)),
                "evictions_reboot": int(v.get("evictions_reboot", 0)),
                "overhead_min_mean": (v.get("overhead_s", 0.0) / completed / 60)
                if completed
                else None,
                "energy_mwh_good": v.get("good_wh", 0.0) / MWH,
                "energy_mwh_wasted": v.get("wasted_wh", 0.0) / MWH,
                "energy_mwh_total": (v.get("good_wh", 0.0) + v.get("wasted_wh", 0.0)) / MWH,
            }
        )
    return rows


def _cores(result: ReplayResult) -> dict[str, Any]:
    """How much of the pool's cores jobs held (a single machine's job holds all of them)."""
    pool, trace = result.pool, result.trace
    total, span = sum(pool.cores), trace.end - trace.start
    busy = pool.core_seconds_held() / span if span > 0 else 0.0
    return {
        "slots": "/".join(sorted({m.slots for m in trace.inventory.machines})),
        "total": total,
        "busy_mean": busy,
        "busy_share": busy / total if total else 0.0,
    }


def summarize(result: ReplayResult) -> dict[str, Any]:
    book, pool = result.book, result.pool
    status = np.asarray(book.status)
    done = status == DONE
    submit = np.asarray(book.submit_t)
    finish = np.asarray(book.finish)
    runtime = np.asarray(book.runtime)
    overhead = (finish[done] - submit[done] - runtime[done]) / 60.0
    good = float(np.sum(book.good_wh)) / MWH
    wasted = float(np.sum(book.wasted_wh)) / MWH
    by_state = {k: v / MWH for k, v in pool.energy_by_state_wh().items()}
    trace = result.trace
    summary = {
        "policy": result.policy,
        "period": {
            "start": trace.start,
            "end": trace.end,
            "days": (trace.end - trace.start) / 86400,
        },
        "machines": len(pool.names),
        "jobs": {
            "submitted": int(np.sum(submit < trace.end)),
            "completed": int(done.sum()),
            "never_finished": int((status == REMOVED).sum()),
            "unfinished_at_end": int(np.sum((submit < trace.end) & ~done & (status != REMOVED))),
            "attempts": int(np.sum(book.attempts)),
        },
        "evictions": dict(book.evictions),
        "overhead_min_mean": float(overhead.mean()) if overhead.size else None,
        "overhead_min_median": float(np.median(overhead)) if overhead.size else None,
        "energy_mwh": {
            "good": good,
            "wasted": wasted,
            "total": good + wasted,
            "in_flight": book.in_flight_wh(trace.end) / MWH,
        },
        "pool_energy_mwh": by_state,
        "cores": _cores(result),
        "months": _month_rows(result),
        "sim": {
            "events": result.events,
            "negotiation_cycles": result.negotiator.cycles,
            "matches": result.negotiator.matches,
            "wall_s": round(result.wall_s, 3),
            "events_per_s": round(result.events / result.wall_s) if result.wall_s else None,
        },
    }
    bound = book.unadvised.bound_s
    if bound is not None:  # the starvation bound: how many jobs it released (unadvised.py)
        released = sum(1 for j in book.unadvised.released if j < len(book.ids))  # no replicas
        summary["wait_bound"] = {"bound_s": bound, "released_jobs": released}
    if result.book.unadvised.control:
        summary["control"] = _arms(result)
    return summary


def _arms(result: ReplayResult) -> dict[str, Any]:
    """Per arm of the control group, the figures ``htcondor-advisor report`` estimates from."""
    book, end = result.book, result.trace.end
    control = book.unadvised.control
    arms: dict[str, Any] = {}
    for arm in ARMS:
        rows = [
            j
            for j in range(len(book.ids))
            if book.submit_t[j] < end and (j in control) == (arm == CONTROL)
        ]
        done = [j for j in rows if book.status[j] == DONE]
        energy = sum(book.good_wh[j] + book.wasted_wh[j] for j in rows)
        overhead = [book.finish[j] - book.submit_t[j] - book.runtime[j] for j in done]
        arms[arm] = {
            "jobs": len(rows),
            "completed": len(done),
            "energy_wh": energy,
            "wasted_wh": sum(book.wasted_wh[j] for j in rows),
            "energy_wh_per_completed": energy / len(done) if done else None,
            "overhead_min_mean": float(np.mean(overhead)) / 60.0 if done else None,
        }
    return arms


def write_outputs(result: ReplayResult, summary: dict[str, Any], out: Path) -> None:
    """``summary.json`` and ``jobs.csv`` (one row per submitted job). An earlier run's summary
    goes first and the new one comes last, so a run stopped on the way (Ctrl-C) leaves no
    summary beside a ``jobs.csv`` of another run for ``report`` to read as one."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").unlink(missing_ok=True)
    _write_jobs(result, out / "jobs.csv.tmp")
    (out / "jobs.csv.tmp").replace(out / "jobs.csv")
    (out / "summary.json.tmp").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    (out / "summary.json.tmp").replace(out / "summary.json")


def _write_jobs(result: ReplayResult, path: Path) -> None:
    book = result.book
    submit = np.asarray(book.submit_t)
    keep = submit < result.trace.end
    finish = np.asarray(book.finish)
    runtime = np.asarray(book.runtime)
    overhead = np.where(np.isfinite(finish), finish - submit - runtime, np.nan)
    cols = [
        submit,
        finish,
        np.asarray(book.attempts),
        overhead,
        np.asarray(book.good_wh),
        np.asarray(book.wasted_wh),
    ]
    ids = np.asarray(book.ids, dtype=object)[keep]
    table = np.column_stack([c[keep] for c in cols])
    bounded = book.unadvised.bound_s is not None  # then a column: released by the bound
    released = book.unadvised.released  # the trace's jobs (replicas were folded in)
    control = book.unadvised.control  # then a column: the job's arm
    kept = np.flatnonzero(keep).tolist()
    flags = [str(int(j in released)) for j in kept]
    last = [book.machine_names[m] if m >= 0 else "" for m in np.asarray(book.machine)[kept]]
    arms = [f",{CONTROL if j in control else TREATED},{m}" for j, m in zip(kept, last, strict=True)]
    with path.open("w") as fh:
        fh.write("job_id,submit,finish,attempts,overhead_s,good_wh,wasted_wh")
        fh.write(",released" if bounded else "")
        fh.write(",arm,machine\n" if control else "\n")
        for job_id, row, flag, arm in zip(ids, table.tolist(), flags, arms, strict=True):
            s, f, a, o, g, w = row
            fin = "" if f != f else f"{f:.0f}"
            ovh = "" if o != o else f"{o:.0f}"
            end = (f",{flag}" if bounded else "") + (arm if control else "") + "\n"
            fh.write(f"{job_id},{s:.0f},{fin},{int(a)},{ovh},{g:.3f},{w:.3f}{end}")


def format_table(summary: dict[str, Any]) -> str:
    """A short human summary: one figure a line."""
    e, j, ev, c = summary["energy_mwh"], summary["jobs"], summary["evictions"], summary["cores"]
    ovh = summary["overhead_min_mean"]
    lines = [
        f"policy               {summary['policy']}",
        f"machines             {summary['machines']}",
        f"jobs submitted       {j['submitted']}",
        f"jobs completed       {j['completed']}",
        f"jobs never finished  {j['never_finished']}  (removed by their user)",
        f"unfinished at end    {j['unfinished_at_end']}",
        f"evictions            owner {ev['owner']}, reboot {ev['reboot']}",
        f"overhead (mean)      {'n/a' if ovh is None else f'{ovh:.2f} min'}",
        f"HTC energy           good {e['good']:.3f} MWh, wasted {e['wasted']:.3f} MWh, "
        f"total {e['total']:.3f} MWh",
        f"cores busy           {c['busy_mean']:.1f} of {c['total']} on average "
        f"({c['busy_share']:.1%}; slots {c['slots']})",
        f"simulation           {summary['sim']['events']} events in {summary['sim']['wall_s']} s "
        f"({summary['sim']['events_per_s']} events/s)",
    ]
    return "\n".join(lines)
