"""``report``: the control group's estimate of what the advice does (treated against control).

From the newest snapshot of a daemon's state directory, or from a replay's (or twin's) output
written with a control group (``replay --control-percent``), so a replay predicts the report.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugins.contract.config_checks import ConfigError
from plugins.contract.control import ARMS

if TYPE_CHECKING:
    from advisor.daemon.effect import Figure, Sample


def register(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--state-dir", type=Path, help="a daemon's state directory")
    where.add_argument("--replay", type=Path, help="a replay's --out (with --control-percent)")
    parser.add_argument(
        "--png",
        type=Path,
        metavar="FILE.png|DIR",
        help="write the effects as a PNG: to FILE.png, or to DIR/effect.png for an existing "
        "directory (its parent directory must exist)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def from_state(directory: Path) -> tuple[list[Sample], dict[str, Any]]:
    from advisor.daemon.effect import samples_of_state
    from advisor.daemon.logs import iso
    from advisor.daemon.state_store import StateStore

    if directory.is_file():
        raise ConfigError(
            f"{directory}: is a file, not a state directory; give the daemon's state.directory"
        )
    if not directory.is_dir():
        raise ConfigError(f"{directory}: no such state directory")
    loaded = StateStore(directory).load_newest()
    if loaded is None:
        raise ConfigError(f"{directory}: no valid snapshot (has the daemon run?)")
    control = loaded.state.get("control")
    if control is None:
        raise ConfigError(
            f"{loaded.path}: no control group (set control.percent to the pool's "
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


REPLAY_HINT = "give the directory `replay --control-percent` wrote (its --out)"
NUMBERS = ("submit", "good_wh", "wasted_wh")
"""Columns of ``jobs.csv`` every row must fill with a finite number (besides ``arm``)."""


def _text(path: Path) -> str:
    """A file of a replay's output as text; bytes that are not UTF-8 are a user's error with
    the line they are on, not a traceback."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text; {REPLAY_HINT}") from None


def _summary(path: Path) -> dict[str, Any]:
    """``summary.json`` as a mapping, or one line saying where it is not one."""
    try:
        summary = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg}); {REPLAY_HINT}"
        ) from None
    if not isinstance(summary, dict):
        raise ConfigError(
            f"{path}: expected a JSON object, got a {type(summary).__name__}; {REPLAY_HINT}"
        )
    return summary


def _number(row: dict[str, Any], column: str, where: str) -> float:
    """A finite number of ``row``, or one line naming the line and column."""
    raw = row[column]
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise ConfigError(
            f"{where}: column {column!r}: expected a number, got {raw!r}; {REPLAY_HINT}"
        )
    return value


def _samples(path: Path) -> list[Sample]:
    """The rows of ``jobs.csv`` as samples; each bad row is named by its line."""
    reader = csv.DictReader(io.StringIO(_text(path), newline=""))
    try:
        columns = reader.fieldnames or []
        if not columns:
            raise ConfigError(f"{path}: empty; {REPLAY_HINT}")
        if "arm" not in columns:
            raise ConfigError(f"{path}: no column 'arm': replayed without --control-percent")
        missing = [c for c in (*NUMBERS, "finish", "overhead_s") if c not in columns]
        if missing:
            raise ConfigError(
                f"{path}:1: no column{'s' if len(missing) > 1 else ''} "
                f"{', '.join(map(repr, missing))}; {REPLAY_HINT}"
            )
        samples: list[Sample] = []
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if None in row.values():
                raise ConfigError(
                    f"{where}: fewer fields than the {len(columns)} columns; {REPLAY_HINT}"
                )
            if row["arm"] not in ARMS:
                raise ConfigError(
                    f"{where}: column 'arm': expected {' or '.join(ARMS)}, "
                    f"got {row['arm']!r}; {REPLAY_HINT}"
                )
            submit, good, wasted = (_number(row, c, where) for c in NUMBERS)
            done = bool(row["finish"].strip())
            if done:
                _number(row, "finish", where)
            overhead = _number(row, "overhead_s", where) if done else None
            samples.append(
                (row["arm"], good + wasted, done, overhead, row.get("machine") or None, submit)
            )
    except csv.Error as exc:
        raise ConfigError(f"{path}:{reader.line_num}: not CSV ({exc}); {REPLAY_HINT}") from None
    return samples


def from_replay(out: Path) -> tuple[list[Sample], dict[str, Any]]:
    """The samples of a replay's output, so a replay predicts what the daemon will report."""
    jobs, summary = out / "jobs.csv", out / "summary.json"
    if out.is_file():
        raise ConfigError(f"{out}: is a file, not a directory; {REPLAY_HINT}")
    if not jobs.is_file() or not summary.is_file():
        raise ConfigError(f"{out}: no jobs.csv and summary.json; {REPLAY_HINT}")
    if _summary(summary).get("control") is None:
        raise ConfigError(f"{summary}: no 'control': replayed without --control-percent")
    return _samples(jobs), {"source": str(jobs)}


def png_target(path: Path) -> Path:
    """Where ``--png`` writes, checked before any work so that a typo costs no estimate: the
    name printed is the file written, and no directory is created on the user's behalf."""
    if path.is_dir():
        path = path / "effect.png"
    elif path.suffix.lower() != ".png":
        raise ConfigError(
            f"--png {path}: not a .png file nor a directory; give FILE.png or a directory"
        )
    if path.is_dir():
        raise ConfigError(f"--png {path}: is a directory; give FILE.png")
    if not path.parent.is_dir():
        raise ConfigError(
            f"--png {path}: no directory {path.parent}; create it or give another path"
        )
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"--png {path}: not writable; give a path you may write")
    return path


def plot(figures: list[Figure], path: Path) -> Path:
    """The ratios with their intervals, one panel per figure, written to ``path`` (checked)."""
    from advisor.daemon.effect import LEVEL
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
        ax.set_ylabel(f"ratio ({LEVEL:.0%} bootstrap interval)")
    try:
        return save(fig, path)
    except OSError as exc:
        raise ConfigError(f"--png {path}: cannot write ({exc.strerror or exc})") from None


def method() -> str:
    """How the intervals were drawn, from the constants ``advisor.daemon.effect`` uses, so the
    footer cannot drift from what the estimate does."""
    from advisor.daemon.effect import LEVEL, RESAMPLES

    return (
        f"intervals: {LEVEL:.0%} percentile bootstrap, {RESAMPLES} seeded resamples, each "
        "drawing the days (the same draw for both arms) and, within each arm, the machines "
        "with their jobs (Owen's pigeonhole bootstrap)"
    )


def run(args: argparse.Namespace) -> int:
    from advisor.daemon.effect import LEVEL, estimate

    png = None if args.png is None else png_target(args.png)
    if args.state_dir is not None:
        samples, about = from_state(args.state_dir)
    else:
        samples, about = from_replay(args.replay)
    try:
        figures = estimate(samples)
    except ValueError as exc:
        raise ConfigError(f"{about['source']}: {exc}") from None
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
                f"ratio {f.ratio:.3f} ({LEVEL:.0%} interval {f.low:.3f} to {f.high:.3f})"
            )
        print(method())
    if png is not None:
        print(f"wrote {plot(figures, png)}", file=sys.stderr if args.json else sys.stdout)
    return 0
