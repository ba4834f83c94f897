"""``experiment utility-bench``: how long one utility-sarsa scheduling decision takes at the
heaviest load of a run (paper 002, sec. V-C: 1 to 10 ms in MATLAB; target here < 10 ms).

A decision is one ``advise`` call: the state, Q for every waiting job, the ranking and the advice
objects (learning happens in ``observe``). The run is simulated once to find the instant with the
longest queue, then again (same seed, so the same decisions and network) up to that instant,
where ``advise`` is timed ``--repeat`` times on that queue.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

import numpy as np

from advisor.arg_types import count, fraction
from plugins.contract.policy import PolicyContext
from simulator.grid_queue.lcg import DEFAULT_SITE, lcg_workload
from simulator.grid_queue.run import GridSimulation, processors
from simulator.grid_queue.synthetic import mmn_workload
from simulator.grid_queue.workload import GridWorkload

if TYPE_CHECKING:
    from plugins.utility.sarsa import UtilitySarsaPolicy

NAME = "utility-bench"
HELP = "time of one utility-sarsa decision at the heaviest load (paper 002 sec. V-C)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fraction", type=fraction, default=0.2, help="synthetic interactive share (0 to 1)"
    )
    parser.add_argument("--swf", default=None, help="use this LCG SWF log (P=100) instead")
    parser.add_argument("--site", type=int, default=DEFAULT_SITE, help="SWF partition with --swf")
    parser.add_argument("--repeat", type=count, default=200, help="timed decisions at the peak")


def _policy(workload: GridWorkload) -> UtilitySarsaPolicy:
    from plugins.utility.sarsa import UtilitySarsaPolicy  # scikit-learn: not at CLI start-up

    context = PolicyContext(processors(workload.processors))
    return UtilitySarsaPolicy(context, {"shares": workload.shares})


def run(args: argparse.Namespace) -> int:
    workload = (
        lcg_workload(args.swf, partition=args.site)
        if args.swf
        else mmn_workload(args.fraction, seed=1)
    )
    learner = _policy(workload)
    first = GridSimulation(workload, learner)
    whole = first.run()
    peak = int(np.argmax(whole.queue_length))
    peak_time = float(np.sort(whole.start)[peak])
    replay = _policy(workload)  # same seed: the same decisions and network up to the peak
    sim = GridSimulation(workload, replay)
    sim.run(until=peak_time)
    view, now = sim.view(), sim.engine.now()
    ms = []
    for _ in range(args.repeat):
        began = time.perf_counter()
        replay.advise(view, now)
        ms.append((time.perf_counter() - began) * 1e3)
    in_run = whole.decision_s * 1e3
    print(f"workload               {workload.name} ({len(workload)} jobs, P={workload.processors})")
    print(f"decisions in the run   {len(in_run)}: advise ms mean {in_run.mean():.3f}, "
          f"median {np.median(in_run):.3f}, p99 {np.percentile(in_run, 99):.3f}")  # fmt: skip
    print(f"heaviest load          {len(replay.model.waiting)} waiting jobs at t={now:.0f} s")
    print(f"advise ms at the peak  median {np.median(ms):.3f}  p95 {np.percentile(ms, 95):.3f}  "
          f"max {max(ms):.3f}  ({args.repeat} calls)")  # fmt: skip
    return 0
