"""``train-idle``: fit the idle-time models on a trace's owner history up to a month, and store
them (``advisor.lab.model_store``) so a daemon or a replay can load them without retraining."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from advisor.arg_types import count, output_directory
from advisor.commands.sources_args import (
    add_reboot_hour,
    add_source_args,
    reboot_hour,
    source_spec,
)
from plugins.contract.policy import OptionError


def register(parser: argparse.ArgumentParser) -> None:
    add_source_args(parser)
    parser.add_argument("--until", required=True, help="train on everything before YYYY-MM")
    parser.add_argument("--term", action="append", metavar="START:END", help="term dates")
    parser.add_argument("--policy", default="idle-avg", help="an idle-* policy (its options)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="policy option")
    parser.add_argument("--workers", type=count, help="training processes (default: one per core)")
    add_reboot_hour(parser, "the daemon's pool.reboot_hour must say the same")
    parser.add_argument("--out", type=output_directory, required=True, help="model store directory")
    parser.set_defaults(handler=run)


def month_start(text: str) -> float:
    try:
        return datetime.strptime(text, "%Y-%m").replace(tzinfo=UTC).timestamp()
    except ValueError:
        raise OptionError(f"--until {text!r}: expected YYYY-MM, e.g. --until 2010-07") from None


def _terms(pairs: list[str] | None) -> list[tuple[float, float]]:
    terms = []
    for pair in pairs or []:
        a, sep, b = pair.partition(":")
        try:
            start = datetime.fromisoformat(a).replace(tzinfo=UTC).timestamp()
            end = datetime.fromisoformat(b).replace(tzinfo=UTC).timestamp() + 86400.0
        except ValueError:
            raise OptionError(
                f"--term {pair!r}: expected START:END, e.g. 2010-01-11:2010-03-26"
            ) from None
        if not sep or end <= start:
            raise OptionError(f"--term {pair!r}: expected START:END with END after START")
        terms.append((start, end))
    return terms


def run(args: argparse.Namespace) -> int:
    from advisor.lab.idle_training import owner_trace, train_and_store
    from advisor.lab.training_map import process_map
    from plugins.contract.option_pairs import parse_sets
    from plugins.idle.policy import IdlePolicy
    from simulator.campus.replay import build_policy

    until = month_start(args.until)
    trace = owner_trace(source_spec(args))
    if args.term:
        trace.terms = _terms(args.term)
    if until <= trace.start:
        raise OptionError(f"--until {args.until}: the trace starts later; no history to train on")
    if until > trace.end:
        last = datetime.fromtimestamp(trace.end, UTC).strftime("%Y-%m")
        raise OptionError(
            f"--until {args.until}: the trace ends before it (in {last}), and the months after "
            f"would be learned as owners' absence; choose a month up to {last}"
        )
    hour, said = reboot_hour(args)
    if said:  # a site's own pool
        print(f"{said} (the daemon's pool.reboot_hour must say the same)")
    policy = build_policy(
        args.policy,
        trace,
        parse_sets(args.set),
        seed=args.seed,
        parallel_map=process_map(workers=args.workers),
        reboot_hour=hour,
    )
    if not isinstance(policy, IdlePolicy):
        raise OptionError(f"--policy {args.policy!r}: choose an idle-* policy")
    done = train_and_store(policy, trace, until, args.out)
    print(f"trained {done.pairs} model pairs on {done.samples} samples")
    print(f"training wall     {done.wall_s:.1f} s (cpu {done.cpu_s:.1f} s, workers included)")
    print(f"one prediction    {done.prediction_us:.0f} us (features + RF + MLP)")
    print(f"wrote {args.out}")
    return 0
