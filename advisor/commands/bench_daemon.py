"""``bench-daemon``: the daemon's budgets (docs/architecture.md, section 5) as printed figures.

``cycle``   CPU of one observe-decide-publish cycle for a synthetic N-slot pool
``memory``  RSS at the start and end of a twin run (and the largest in between)
``crash``   SIGKILL the twin at random moments; every restart must resume from a valid snapshot
``sigterm`` SIGTERM the twin halfway, restart it, compare the final figures with an unbroken run
``idle-connections`` hold N idle connections to the twin; hook latency, threads, fds, snapshots
``relearn`` a restarted idle policy learning a campus's owner history again from its journal
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from advisor.arg_types import count, duration_text, positive_number, whole_number
from plugins.contract.option_pairs import parse_sets

PAGE = os.sysconf("SC_PAGE_SIZE")


def register(parser: argparse.ArgumentParser) -> None:
    what = ["cycle", "memory", "crash", "sigterm", "idle-connections", "relearn"]
    parser.add_argument("what", choices=what)
    parser.add_argument("--policy", default="random")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE")
    parser.add_argument("--slots", type=count, default=10_000, help="cycle: pool size")
    parser.add_argument("--events", type=whole_number, default=500, help="cycle: events per cycle")
    parser.add_argument("--cycles", type=count, default=20, help="cycle: cycles measured")
    parser.add_argument("--days", type=count, default=30, help="memory/crash: simulated days")
    parser.add_argument(
        "--scale", type=positive_number, default=0.1, help="memory/crash: pool scale"
    )
    parser.add_argument("--seed", type=whole_number, default=3)
    parser.add_argument("--kills", type=count, default=20, help="crash: SIGKILLs")
    parser.add_argument("--speed", type=positive_number, default=40_000.0, help="crash: twin speed")
    parser.add_argument(
        "--snapshot-interval", type=duration_text, default="6h", help="crash: simulated interval"
    )
    parser.add_argument("--connections", type=count, default=1000, help="idle-connections: held")
    parser.add_argument(
        "--hold", type=positive_number, default=60.0, help="idle-connections: wall s"
    )
    parser.add_argument("--fd-limit", type=count, help="idle-connections: the daemon's NOFILE")
    parser.set_defaults(handler=run)


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE / 2**20


def _rows(*rows: tuple[str, object]) -> None:
    for label, value in rows:
        print(f"{label:<24}{value}")


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="advisor-bench-") as work:
        return {
            "cycle": _cycle,
            "memory": _memory,
            "crash": _crash,
            "sigterm": _crash,
            "idle-connections": _idle_connections,
            "relearn": _relearn,
        }[args.what](args, Path(work))


def _cycle(args: argparse.Namespace, work: Path) -> int:
    from advisor.lab.bench_cycle import bench_cycles

    figures = bench_cycles(
        args.slots, args.events, args.cycles, args.policy, parse_sets(args.set), str(work)
    )
    _rows(
        ("policy", args.policy),
        ("slots", args.slots),
        ("events per cycle", args.events),
        ("cycle CPU s (mean)", f"{figures['cycle_cpu_s_mean']:.4f}  (budget 1 s)"),
        ("cycle CPU s (max)", f"{figures['cycle_cpu_s_max']:.4f}"),
        ("hook lines, all slots", f"{figures['hook_all_machines_cpu_s']:.4f} CPU s"),
        ("snapshot CPU s", f"{figures['snapshot_cpu_s']:.4f}"),
    )
    return 0


def _memory(args: argparse.Namespace, work: Path) -> int:
    from advisor.daemon.config import check_config
    from advisor.daemon.signals import Control
    from advisor.lab.twin_run import TwinOptions, run_twin

    config = check_config(
        {
            "pool": {"kind": "sim", "days": args.days, "scale": args.scale, "seed": args.seed},
            "policy": {"name": args.policy, "options": parse_sets(args.set)},
            "publish": {"listen": "127.0.0.1:0"},
            "state": {"directory": str(work / "state")},
        }
    )
    samples: list[tuple[float, float]] = []
    outcome = run_twin(
        config, Control(), TwinOptions(on_progress=lambda f: samples.append((f, rss_mb())))
    )
    end = rss_mb()
    _rows(
        ("policy", args.policy),
        ("twin days / scale", f"{args.days} / {args.scale}"),
        ("machines", outcome.summary["machines"] if outcome.summary else "?"),
        ("RSS MB at start", f"{samples[0][1]:.1f}  (trace built, first simulated day)"),
        ("RSS MB half-way", f"{min(samples, key=lambda s: abs(s[0] - 0.5))[1]:.1f}"),
        ("RSS MB at end", f"{end:.1f}"),
        ("RSS MB largest sample", f"{max(s[1] for s in samples):.1f}"),
    )
    return 0


def _crash(args: argparse.Namespace, work: Path) -> int:
    from advisor.lab.crash_bench import crash_twin, stop_halfway

    twin = ["--pool", "sim:campus", "--days", str(args.days), "--scale", str(args.scale)]
    twin += ["--seed", str(args.seed), "--policy", args.policy]
    twin += [f"--set={s}" for s in args.set or []]
    twin += ["--snapshot-interval", args.snapshot_interval]
    if args.what == "sigterm":
        report = stop_halfway(twin, work, args.speed)
    else:
        report = crash_twin(twin, work, args.kills, args.speed, args.seed)
    print(f"kills                   {report.kills}")
    print(f"restarts from snapshot  {report.resumed}  (fresh: {report.fresh_starts}, the first)")
    print(f"corrupt snapshots seen  {report.corrupt_skipped}")
    if report.lost_s:
        print(
            f"learning lost, sim s    max {max(report.lost_s):.0f}, "
            f"mean {sum(report.lost_s) / len(report.lost_s):.0f} "
            f"(snapshot interval {args.snapshot_interval})"
        )
    assert report.final is not None and report.reference is not None
    print(f"policy                  {report.final['policy']}")
    for key in ("good", "wasted", "total"):
        a, b = report.final["energy_mwh"][key], report.reference["energy_mwh"][key]
        diff = abs(a - b) / b * 100 if b else 0.0
        print(f"energy {key:<6} MWh      crashed {a:.6f}  uninterrupted {b:.6f}  ({diff:.2f}%)")
    a, b = report.final["jobs"]["completed"], report.reference["jobs"]["completed"]
    print(f"jobs completed          crashed {a}  uninterrupted {b}")
    a, b = report.final["overhead_min_mean"], report.reference["overhead_min_mean"]
    print(f"overhead min (mean)     crashed {a:.3f}  uninterrupted {b:.3f}")
    return 0


def _idle_connections(args: argparse.Namespace, work: Path) -> int:
    from advisor.lab.idle_connections_bench import hold_idle_connections, print_report

    # sim time passes 3600x: the campus twin has events (and so snapshots) every simulated hour
    twin = ["--pool", "sim:campus", "--speed", "3600", "--snapshot-interval", "1h"]
    twin += ["--seed", str(args.seed), "--policy", args.policy]
    twin += [f"--set={s}" for s in args.set or []]
    report = hold_idle_connections(twin, work, args.connections, args.hold, fd_limit=args.fd_limit)
    print_report(report, twin)
    return 0 if report.alive_after and report.exit_code == 0 else 1


def _relearn(args: argparse.Namespace, work: Path) -> int:
    from advisor.lab.relearn_bench import bench_relearn

    policy = "idle-min" if args.policy == "random" else args.policy  # one that relearns
    figures = bench_relearn(policy, args.days, args.scale, args.seed, work)
    _rows(
        ("policy", policy),
        ("campus days / scale", f"{args.days} / {args.scale}"),
        ("machines", figures["machines"]),
        ("events relearned", figures["events"]),
        ("journal MB", f"{figures['journal_mb']:.1f}"),
        ("wall s", f"{figures['wall_s']:.1f}"),
        ("CPU s", f"{figures['cpu_s']:.1f}"),
        ("peak RSS MB", f"{figures['peak_rss_mb']:.0f}"),
    )
    return 0
