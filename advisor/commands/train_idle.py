"""``train-idle``: fit the idle-time models on a trace's owner history up to a month, and store
them (``advisor.lab.model_store``) so a daemon or a replay can load them without retraining."""

from __future__ import annotations

import argparse
import resource
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from advisor.commands.sources_args import add_source_args, parse_sets, source_spec
from advisor.lab.model_store import save_models
from advisor.lab.training_map import process_map
from plugins.contract.policy import OptionError
from plugins.idle.history import history_from_sessions
from simulator.campus.replay import build_policy
from simulator.sources import SourceError, assemble
from simulator.trace_model import Jobs, Trace
from simulator.traces import read_inventory, read_owner_sessions

if TYPE_CHECKING:
    from plugins.idle.policy import IdlePolicy


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("train-idle", help="train and store idle-time models (paper 004)")
    add_source_args(parser)
    parser.add_argument("--until", required=True, help="train on everything before YYYY-MM")
    parser.add_argument("--term", action="append", metavar="START:END", help="term dates")
    parser.add_argument("--policy", default="idle-avg", help="an idle-* policy (its options)")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="policy option")
    parser.add_argument("--workers", type=int, help="training processes (default: one per core)")
    parser.add_argument("--out", type=Path, required=True, help="model store directory")
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


def _trace(args: argparse.Namespace) -> Trace:
    """Owner sessions only: a scenario, or ``--machines`` with ``--owners`` (no jobs needed)."""
    if args.scenario is not None:
        trace, _ = assemble(source_spec(args))
        return trace
    if args.machines is None or args.owners is None:
        raise SourceError("train-idle needs --scenario campus, or --machines F with --owners F")
    inventory = read_inventory(args.machines)
    owners = read_owner_sessions(args.owners, inventory)
    start = float(owners.login.min()) if len(owners) else 0.0
    empty = Jobs([], [], *(np.empty(0),) * 3)
    return Trace(inventory, owners, empty, start, float(owners.logout.max(initial=start)))


def load_history(policy: IdlePolicy, trace: Trace, until: float) -> None:
    """Give the policy the owner history a replay up to ``until`` would have shown it."""
    owners = trace.owners
    for i, machine in enumerate(trace.inventory.machines):
        mine = owners.machine == i
        policy.histories[machine.name] = history_from_sessions(
            owners.login[mine], owners.logout[mine], trace.start, until, policy.context.reboot_hour
        )


def _cpu_s() -> float:
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _prediction_us(policy: IdlePolicy, now: float) -> float:
    """Mean wall time of ``predict`` over every machine with a model (a benchmark figure)."""
    names = [n for n in policy.histories if policy.trainer.group_of[n] in policy.models]
    if not names:
        return float("nan")
    began = time.perf_counter()
    for name in names:
        policy.predict(name, now, now)
    return (time.perf_counter() - began) / len(names) * 1e6


def run(args: argparse.Namespace) -> int:
    from plugins.idle.policy import IdlePolicy  # scikit-learn: imported only when training

    until = month_start(args.until)
    trace = _trace(args)
    if args.term:
        trace.terms = _terms(args.term)
    if until <= trace.start:
        raise OptionError(f"--until {args.until}: the trace starts later; no history to train on")
    policy = build_policy(
        args.policy,
        trace,
        parse_sets(args.set),
        seed=args.seed,
        parallel_map=process_map(workers=args.workers),
    )
    if not isinstance(policy, IdlePolicy):
        raise OptionError(f"--policy {args.policy!r}: choose an idle-* policy")
    load_history(policy, trace, until)
    began, cpu = time.perf_counter(), _cpu_s()
    policy.retrain(until)
    took, cpu = time.perf_counter() - began, _cpu_s() - cpu
    trainer = policy.trainer
    save_models(
        args.out,
        policy.models,
        window=(trace.start, until),
        features=trainer.feature_names,
        options=policy.options,
        scores=trainer.state_dict(),
    )
    samples = sum(p.samples for p in policy.models.values())
    print(f"trained {len(policy.models)} model pairs on {samples} samples")
    print(f"training wall     {took:.1f} s (cpu {cpu:.1f} s in this process and its workers)")
    print(f"one prediction    {_prediction_us(policy, until):.0f} us (features + RF + MLP)")
    print(f"wrote {args.out}")
    return 0
