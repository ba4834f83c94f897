"""``experiment utility-bench``: how long one utility-sarsa scheduling decision takes at the
heaviest load of a run (paper 002, sec. V-C: 1 to 10 ms in MATLAB; target here < 10 ms).

A decision is one ``advise`` call: the state, Q for every waiting job, the ranking and the advice
objects. Learning happens in ``observe`` and is timed separately per decision.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from plugins.policy import PolicyContext
from plugins.utility.sarsa import UtilitySarsaPolicy
from simulator.grid_queue.lcg import lcg_workload
from simulator.grid_queue.run import GridSimulation, processors
from simulator.grid_queue.synthetic import mmn_workload

NAME = "utility-bench"
HELP = "time of one utility-sarsa decision at the heaviest load (paper 002 sec. V-C)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fraction", type=float, default=0.2, help="synthetic interactive share")
    parser.add_argument("--swf", default=None, help="use this LCG SWF log (site 8, P=100) instead")
    parser.add_argument("--top", type=float, default=1.0, help="percent of longest queues timed")


def run(args: argparse.Namespace) -> int:
    workload = lcg_workload(args.swf) if args.swf else mmn_workload(args.fraction, seed=1)
    policy = UtilitySarsaPolicy(
        PolicyContext(processors(workload.processors)), {"shares": workload.shares}
    )
    began = time.perf_counter()
    result = GridSimulation(workload, policy).run()
    wall = time.perf_counter() - began
    ms = result.decision_s * 1e3
    cut = np.percentile(result.queue_length, 100 - args.top)
    heavy = ms[result.queue_length >= cut]
    print(
        f"workload                {workload.name} ({len(workload)} jobs, P={workload.processors})"
    )
    print(f"decisions               {len(ms)}")
    print(f"simulation wall s       {wall:.2f}  (learning included)")
    print(f"advise ms, all          mean {ms.mean():.3f}  p99 {np.percentile(ms, 99):.3f}")
    print(f"longest queue           {int(result.queue_length.max())} jobs")
    print(f"advise ms, queue >= {int(cut):<4}  ({len(heavy)} decisions) "
          f"median {np.median(heavy):.3f}  p99 {np.percentile(heavy, 99):.3f}  "
          f"max {heavy.max():.3f}")  # fmt: skip
    return 0
