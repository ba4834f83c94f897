"""What changes when a desktop takes several jobs: the campus year replayed with every machine
``single`` (the papers' model) and ``partitionable`` (HTCondor's default since 23.x,
docs/slots.md), under random, the crystal oracle, the cluster bandit and idle-min."""

from __future__ import annotations

import argparse
from typing import Any

from advisor.lab.experiments.sweep_runs import (
    Task,
    add_campus_arguments,
    run_tasks,
    save_plot,
    scale_note,
    write_csv,
)
from simulator.plotting import legend_outside, panels
from simulator.trace_model import PARTITIONABLE, SINGLE

NAME = "slots"
HELP = "single vs partitionable machines: energy and overhead of four policies side by side"
POLICIES = ("random", "crystal", "bandit-cluster", "idle-min")
LAYOUTS = (SINGLE, PARTITIONABLE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_campus_arguments(parser, scale=1.0, days=None)


def saving_share(rows: list[dict[str, Any]], row: dict[str, Any]) -> float | None:
    """(random - policy) / (random - crystal) in the row's own layout (DESIGN.md section 7)."""
    same = {r["policy"]: r["total_mwh"] for r in rows if r["slots"] == row["slots"]}
    achievable = same["random"] - same["crystal"]
    return (same["random"] - row["total_mwh"]) / achievable if achievable > 0 else None


def run(args: argparse.Namespace) -> int:
    camp = {"scale": args.scale, "days": args.days, "seed": args.seed}
    tasks = [Task(p, slots=slots, **camp) for slots in LAYOUTS for p in POLICIES]
    rows = run_tasks(tasks, args, NAME)
    for row in rows:
        row["saving_share"] = saving_share(rows, row)
    write_csv(rows, args.out / "slots.csv")
    fig, axes = panels(1, 3, 12, 4)
    width = 0.38
    for i, slots in enumerate(LAYOUTS):
        mine = [next(r for r in rows if r["policy"] == p and r["slots"] == slots) for p in POLICIES]
        at = [x + (i - 0.5) * width for x in range(len(POLICIES))]
        for ax, key in zip(axes, ("total_mwh", "overhead_min", "cores_busy_share"), strict=True):
            ax.bar(at, [r[key] for r in mine], width, label=slots)
    for ax, label in zip(
        axes, ("HTC energy (MWh)", "mean overhead (min)", "share of cores held"), strict=True
    ):
        ax.set_xticks(range(len(POLICIES)), POLICIES, rotation=20)
        ax.set(ylabel=label)
    legend_outside(axes, where="below")
    fig.suptitle(scale_note(args))
    save_plot(fig, args.out / "slots.png")
    print(f"{'policy':<16}{'slots':<15}{'MWh':>9}{'overhead min':>14}{'saving':>8}{'cores':>7}")
    for r in rows:
        share = "n/a" if r["saving_share"] is None else f"{r['saving_share']:.2f}"
        print(
            f"{r['policy']:<16}{r['slots']:<15}{r['total_mwh']:>9.2f}"
            f"{r['overhead_min']:>14.2f}{share:>8}{r['cores_busy_share']:>7.1%}"
        )
    return 0
