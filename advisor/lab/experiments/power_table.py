"""``experiment power-table``: paper 001's Table 3 and figure 6 on the catalogued logs or a
site's own (``--swf``, ``--jobs``).

Every policy (T(0), T(1), T(5), OR*, or-ppo when a trained agent exists) plays every day of each
workload; ``days.csv`` has one row per policy and day, ``table3.csv`` the avg/std/min/max per
policy, workload and split, and ``fig6.png`` the cumulative daily waste (normalised by the largest
policy's total), training days left of the dashed line and test days right of it;
``day-<log>.png`` shows one test day's node states under each policy. ``DS`` is the
trained agent train-power chose on its validation days (``-best``, else its last checkpoint; the
shipped agent of a catalogued log when ``--agents`` has none), ``DS-bc`` the agent right after
its warm start and ``DS-last`` the last PPO iterate (both when train-power kept them).
"""

from __future__ import annotations

import argparse
import csv
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from advisor.agent_files import shipped_names, with_agent
from advisor.arg_types import count, output_directory
from advisor.lab.experiments.power_day import plot_day
from advisor.lab.parallel import run_parallel
from advisor.lab.power_checkpoints import checkpoint_path, shipped_path
from advisor.lab.power_logs import add_log_arguments, chosen_logs
from plugins.contract.advice import Advice
from plugins.contract.policy import PolicyContext
from plugins.contract.registry import policy_class
from plugins.power.view import ClusterView
from simulator.dedicated.catalog import CATALOG, ClusterLog, load_days
from simulator.dedicated.episode import DayEpisode
from simulator.plotting import legend_outside, panels, save

NAME = "power-table"
HELP = "Table 3 and figure 6 of paper 001: waste, cycles, slowdown per power policy and day"
POLICIES: list[tuple[str, str, dict[str, Any]]] = [
    ("T(0)", "timeout", {"t": 0.0}),
    ("T(1)", "timeout", {"t": 1.0}),
    ("T(5)", "timeout", {"t": 5.0}),
    ("OR*", "or-oracle", {}),
    ("DS", "or-ppo", {}),
    ("DS-bc", "or-ppo", {}),
    ("DS-last", "or-ppo", {}),
]
"""DS is the shipped agent (chosen on validation days); DS-bc the agent after its warm start only
(cloned OR*); DS-last PPO's last iterate, shown when it is not what DS ships."""
METRICS = (
    "waste_kj", "cycles_per_node", "slowdown", "delay_s", "stretch", "unstarted", "decision_us",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_log_arguments(parser, many=True)
    parser.add_argument("--out", type=output_directory, default="out/power-table")
    parser.add_argument(
        "--agents", default="runs/power",
        help="where train-power wrote agents (DS falls back to the shipped agent of a log)",
    )  # fmt: skip
    parser.add_argument("--workers", type=count, default=None)
    parser.add_argument("--max-days", type=int, default=None, help="per split (quick looks)")
    parser.add_argument(
        "--splits", nargs="+", default=["train", "test"], choices=["train", "test"],
        help="which days to play (test alone: what a new log's agent is judged on)",
    )  # fmt: skip
    parser.add_argument(
        "--policies", nargs="+", default=[label for label, _, _ in POLICIES],
        choices=[label for label, _, _ in POLICIES], metavar="LABEL",
        help="rows of the table (default all: T(0) T(1) T(5) OR* DS DS-bc DS-last)",
    )  # fmt: skip
    parser.add_argument(
        "--day", type=int, default=None, help="test day (index) of the node-state plot"
    )


def policy_for_day(name: str, options: dict[str, Any], seed: int, agent: str | None) -> Any:
    """A policy of the table, its agent read from ``agent`` (a file or a shipped name)."""
    given = options if agent is None else options | {"agent": agent}
    return policy_class(name)(PolicyContext({}, seed=seed), with_agent(name, given))


Task = tuple[ClusterLog, str, str, dict[str, Any], str, int, str | None]
"""One policy-day: log, label, policy name, options, split, day position, agent."""


def _play(task: Task) -> dict[str, Any]:
    log, label, name, options, split, position, agent = task
    train, test = load_days(log)
    day = (train if split == "train" else test)[position]
    timed = TimedPolicy(policy_for_day(name, options, position, agent))
    metrics = DayEpisode(day.jobs).run(timed)
    row = {"workload": log.name, "policy": label, "split": split, "day": day.index}
    row |= {"group": day.group, "decision_us": 1e6 * timed.seconds / max(1, timed.calls)}
    return row | asdict(metrics)


class TimedPolicy:
    """Measures the wall time of each decision (the benchmark: one decision under 1 ms)."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.NEEDS_ORACLE = bool(policy.NEEDS_ORACLE)
        self.seconds, self.calls = 0.0, 0

    def bind_oracle(self, oracle: Any) -> None:
        self.policy.bind_oracle(oracle)

    def advise(self, view: ClusterView, now: float) -> Advice:
        began = time.perf_counter()
        advice = self.policy.advise(view, now)
        self.seconds += time.perf_counter() - began
        self.calls += 1
        return advice


def chosen(labels: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    return [p for p in POLICIES if p[0] in labels]


def agents_of(folder: str, workload: str) -> dict[str, str]:
    """DS, DS-bc and DS-last files train-power left in ``folder`` for ``workload``; DS alone is
    the shipped agent when the folder has none and one is shipped."""
    final = checkpoint_path(folder, workload)
    found = {
        "DS": shipped_path(folder, workload),
        "DS-bc": final.with_name(f"{final.stem}-warm.npz"),
        "DS-last": final,
    }
    agents = {label: str(path) for label, path in found.items() if path.exists()}
    if "DS" in agents and agents["DS"] == agents.get("DS-last"):
        del agents["DS-last"]  # no validation choice: DS is already the last iterate
    if "DS" not in agents and workload in shipped_names():
        print(f"no agent in {folder} for {workload}: DS is the shipped agent {workload}")
        agents["DS"] = workload
    return agents


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not (args.workloads or args.swf or args.jobs):
        args.workloads = sorted(CATALOG)
    logs = chosen_logs(args)
    tasks = []
    for log in logs:
        train, test = load_days(log)
        agents = agents_of(args.agents, log.name)
        for label, name, options in chosen(args.policies):
            agent = agents.get(label)
            if name == "or-ppo" and agent is None:
                if label == "DS":
                    print(f"no agent for {log.name} (run train-power): DS left out")
                continue
            for split, days in (("train", train), ("test", test)):
                if split not in args.splits:
                    continue
                for i in range(min(len(days), args.max_days or len(days))):
                    tasks.append((log, label, name, options, split, i, agent))
    rows = run_parallel(_play, tasks, workers=args.workers, desc="policy-days")
    with open(out / "days.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    summary = summarise(rows)
    with open(out / "table3.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(summary[0]))
        writer.writeheader()
        writer.writerows(summary)
    print_table(summary)
    plot_fig6(rows, out / "fig6.png")
    for log in logs:
        agents = agents_of(args.agents, log.name)
        policies = {
            label: policy_for_day(name, options, 0, agents.get(label))
            for label, name, options in chosen(args.policies)
            if name != "or-ppo" or label in agents
        }
        png = out / f"day-{log.name}.png"
        plot_day(log, args.day, policies, png)
        print(f"wrote {png}")
    print(f"wrote {out / 'days.csv'}, {out / 'table3.csv'}, {out / 'fig6.png'}")
    return 0


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """avg/std/min/max of each metric per workload, policy and split (Table 3), plus totals."""
    out = []
    keys = sorted({(r["workload"], r["split"], r["policy"]) for r in rows})
    for workload, split, policy in keys:
        mine = [
            r for r in rows if (r["workload"], r["split"], r["policy"]) == (workload, split, policy)
        ]
        entry: dict[str, Any] = {"workload": workload, "split": split, "policy": policy}
        entry["days"] = len(mine)
        entry["waste_mj_total"] = sum(r["waste_kj"] for r in mine) / 1e3
        entry["switch_offs_per_node_total"] = sum(r["cycles_per_node"] for r in mine)
        for metric in METRICS:
            v = np.array([r[metric] for r in mine], dtype=float)
            entry |= {f"{metric}_avg": v.mean(), f"{metric}_std": v.std()}
            entry |= {f"{metric}_min": v.min(), f"{metric}_max": v.max()}
        out.append(entry)
    return out


def print_table(summary: list[dict[str, Any]]) -> None:
    """Totals per workload, split and policy; waste also as a share of T(5)'s on the same days."""
    t5 = {(s["workload"], s["split"]): s["waste_mj_total"] for s in summary
          if s["policy"] == "T(5)"}  # fmt: skip
    w = max([8, *(len(s["workload"]) for s in summary)])
    print(f"{'workload':{w}} {'split':5} {'policy':7} {'days':>4} {'waste MJ':>9} {'%T(5)':>6} "
          f"{'cyc/node':>8} {'slowdown':>8} {'delay s':>8} {'stretch':>7} {'µs/d':>6}")  # fmt: skip
    for s in summary:
        base = t5.get((s["workload"], s["split"]))
        share = f"{100 * s['waste_mj_total'] / base:6.2f}" if base else f"{'-':>6}"
        print(
            f"{s['workload']:{w}} {s['split']:5} {s['policy']:7} {s['days']:4d} "
            f"{s['waste_mj_total']:9.2f} {share} {s['switch_offs_per_node_total']:8.2f} "
            f"{s['slowdown_avg']:8.2f} {s['delay_s_avg']:8.2f} {s['stretch_avg']:7.3f} "
            f"{s['decision_us_avg']:6.0f}"
        )


def plot_fig6(rows: list[dict[str, Any]], png: Path) -> None:
    """Cumulative daily waste per policy over train days then test days (figure 6); a policy keeps
    its colour in every panel, so one legend serves them all."""
    workloads = sorted({r["workload"] for r in rows})
    colors = {label: f"C{i}" for i, (label, _, _) in enumerate(POLICIES)}
    fig, axes = panels(1, len(workloads), width=6 * len(workloads) + 1, height=4)
    for ax, workload in zip(axes, workloads, strict=True):
        mine = [r for r in rows if r["workload"] == workload]
        policies = list(dict.fromkeys(r["policy"] for r in mine))
        n_train = len({r["day"] for r in mine if r["split"] == "train"})
        curves = {}
        for policy in policies:
            ordered = sorted(
                (r for r in mine if r["policy"] == policy),
                key=lambda r: (r["split"] != "train", r["day"]),
            )
            curves[policy] = np.cumsum([r["waste_kj"] for r in ordered])
        top = max(c[-1] for c in curves.values())
        for policy, curve in curves.items():
            ax.plot(np.arange(1, len(curve) + 1), curve / top, color=colors[policy], label=policy)
        ax.axvline(n_train + 0.5, linestyle="--", color="grey")
        ax.set_title(f"{workload}: train | test days")
        ax.set_xlabel("day")
        ax.set_ylabel("normalised cumulative waste")
    legend_outside(axes)
    save(fig, png)
