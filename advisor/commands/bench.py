"""``bench replay``: wall time, events per second and peak memory of one replay."""

from __future__ import annotations

import argparse
import resource
import time
from typing import TYPE_CHECKING

from advisor.commands.replay import add_pool_args, run_replay
from advisor.commands.sources_args import add_source_args

if TYPE_CHECKING:
    from simulator.campus.negotiator import Negotiator


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=["replay"])
    add_source_args(parser)
    add_pool_args(parser)
    parser.set_defaults(handler=run, no_progress=True)


def run(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    cpu0 = time.process_time()
    result = run_replay(args)
    total = time.perf_counter() - began
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"policy            {result.policy}")
    print(f"machines          {len(result.pool.names)}")
    print(f"jobs              {len(result.trace.jobs)}")
    print(f"owner sessions    {len(result.trace.owners)}")
    print(f"events            {result.events}")
    print(f"replay wall s     {result.wall_s:.2f}")
    print(
        f"replay cpu s      {result.cpu_s:.2f}  (the replay alone; budget: 60 s for a campus year)"
    )
    print(f"events per s      {result.events / result.wall_s:.0f}")
    print(f"total wall s      {total:.2f}  (generation or reading included)")
    print(f"total cpu s       {time.process_time() - cpu0:.2f}")
    print(f"peak RSS MB       {peak_mb:.0f}")
    print(f"hot modules       {hot_modules()}")
    print_decision_latency(result.negotiator)
    return 0


def hot_modules() -> str:
    """Whether the replay ran compiled: the budget assumes a regular install (setup.py)."""
    from simulator.hot_modules import HOT_MODULES, compiled_count

    compiled = compiled_count()
    if compiled == len(HOT_MODULES):
        return f"compiled ({compiled} modules, mypyc)"
    return (
        f"{compiled} of {len(HOT_MODULES)} compiled: `pip install .` with a C compiler compiles "
        "them all (an editable install stays pure Python, and slower)"
    )


def print_decision_latency(negotiator: Negotiator) -> None:
    """Wall time of ``advise`` per negotiation cycle, and per placement decision it drew."""
    import numpy as np

    from simulator.campus.advice_source import AskedPolicy

    calls = np.asarray(negotiator.advise_s)
    if not calls.size:
        return
    print(f"advise calls      {calls.size}")
    print(f"advise mean us    {calls.mean() * 1e6:.1f}")
    print(f"advise p99 us     {np.percentile(calls, 99) * 1e6:.1f}")
    print(f"advise max us     {calls.max() * 1e6:.1f}")
    source = negotiator.source
    decisions = getattr(source.policy, "decisions", 0) if isinstance(source, AskedPolicy) else 0
    if decisions:
        print(f"decisions         {decisions}")
        print(f"us per decision   {calls.sum() / decisions * 1e6:.1f}  (advise time / decisions)")
