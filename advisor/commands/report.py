"""``report``: the control group's estimate of what the advice does (treated against control).

From the newest snapshot of a daemon's state directory, or from a replay's (or twin's) output
written with a control group (``replay --control-percent``), so a replay predicts the report.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugins.contract.config_checks import ConfigError

if TYPE_CHECKING:
    from advisor.daemon.effect import Figure, Sample


def register(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--state-dir", type=Path, help="a daemon's state directory")
    where.add_argument("--replay", type=Path, help="a replay's --out (with --control-percent)")
    parser.add_argument("--png", type=Path, help="write the effects as a PNG here")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def from_state(directory: Path) -> tuple[list[Sample], dict[str, Any]]:
    from advisor.daemon.effect import samples_of_state
    from advisor.daemon.logs import iso
    from advisor.daemon.state_store import StateStore

    if not directory.is_dir():
        raise ConfigError(f"report: {directory}: no such state directory")
    loaded = StateStore(directory).load_newest()
    if loaded is None:
        raise ConfigError(f"report: {directory}: no valid snapshot (has the daemon run?)")
    control = loaded.state.get("control")
    if control is None:
        raise ConfigError(
            f"report: {loaded.path}: no control group (set control.percent to the pool's "
            "ADVISOR_CONTROL_PERCENT)"
        )
    since = control["since"]
    about = {
        "source": str(loaded.path),
        "at": iso(loaded.saved_at),
        "percent": control["percent"],
        "guard": ("withholding advice" if control["withheld"] else "publishing")
        + ("" if since is None else f" since {iso(since)}"),
    }
    return samples_of_state(control), about


def from_replay(out: Path) -> tuple[list[Sample], dict[str, Any]]:
    jobs, summary = out / "jobs.csv", out / "summary.json"
    if not jobs.is_file() or not summary.is_file():
        raise ConfigError(f"report: {out}: no jobs.csv and summary.json (a replay's --out)")
    control = json.loads(summary.read_text()).get("control")
    with jobs.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    if control is None or not rows or "arm" not in rows[0]:
        raise ConfigError(f"report: {out}: replayed without --control-percent")
    samples: list[Sample] = []
    for row in rows:
        energy = float(row["good_wh"]) + float(row["wasted_wh"])
        done = bool(row["finish"])
        overhead = float(row["overhead_s"]) if done else None
        machine = row.get("machine") or None
        samples.append((row["arm"], energy, done, overhead, machine, float(row["submit"])))
    return samples, {"source": str(jobs)}


def plot(figures: list[Figure], path: Path) -> Path:
    from simulator.plotting import panels, save

    fig, axes = panels(1, len(figures), width=4.0 * len(figures), height=3.2)
    for ax, f in zip(axes, figures, strict=True):
        ax.errorbar(
            [0], [f.ratio], yerr=[[f.ratio - f.low], [f.high - f.ratio]], fmt="o", capsize=6
        )
        ax.axhline(1.0, color="k", linestyle="--", lw=1)
        ax.set_xticks([0], ["treated / control"])
        ax.set_xlim(-1, 1)
        ax.set_title(f"{f.name}\n{f.treated:.3g} vs {f.control:.3g} {f.unit}", fontsize=9)
        ax.set_ylabel("ratio (95% bootstrap interval)")
    return save(fig, path)


def run(args: argparse.Namespace) -> int:
    from advisor.daemon.effect import RESAMPLES, estimate

    if args.state_dir is not None:
        samples, about = from_state(args.state_dir)
    else:
        samples, about = from_replay(args.replay)
    try:
        figures = estimate(samples)
    except ValueError as exc:
        raise ConfigError(f"report: {about['source']}: {exc}") from None
    counts = {
        arm: (
            sum(1 for s in samples if s[0] == arm),
            sum(1 for s in samples if s[0] == arm and s[2]),
        )
        for arm in ("treated", "control")
    }
    if args.json:
        rows = [f.__dict__ for f in figures]
        print(json.dumps({**about, "jobs": counts, "effects": rows}, indent=1))
    else:
        print(
            f"source         {about['source']}"
            + (f" (saved {about['at']})" if "at" in about else "")
        )
        share = f"{about['percent']}% configured" if "percent" in about else "split"
        print(
            f"control group  {share}; jobs (completed): "
            f"treated {counts['treated'][0]} ({counts['treated'][1]}), "
            f"control {counts['control'][0]} ({counts['control'][1]})"
        )
        if "guard" in about:
            print(f"guard          {about['guard']}")
        for f in figures:
            print(
                f"{f.name:<26} treated {f.treated:.2f} {f.unit}, control {f.control:.2f} {f.unit}: "
                f"ratio {f.ratio:.3f} (95% interval {f.low:.3f} to {f.high:.3f})"
            )
        print(
            f"intervals: percentile bootstrap, {RESAMPLES} resamples of the machines of each arm "
            "with their jobs"
        )
    if args.png is not None:
        print(f"wrote {plot(figures, args.png)}", file=sys.stderr if args.json else sys.stdout)
    return 0
