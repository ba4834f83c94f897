"""Train the ``or-ppo`` agent on a dedicated-cluster log's training days (``train-power``).

Each iteration, ``--actors`` days drawn uniformly from the fit days (never a test or validation
day) are played by the sampling agent in ``--workers`` processes, then PPO updates the weights
(paper 001, section 4.3). A checkpoint after every iteration makes the run resumable; the
learning curve is a PNG.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from advisor.lab.parallel import run_parallel
from advisor.lab.power_checkpoints import (
    best_path,
    checkpoint_path,
    export_agent,
    load_checkpoint,
    save_checkpoint,
)
from advisor.lab.power_curve import plot_curve
from advisor.lab.power_warm_start import warm_start
from advisor.lab.progress import terminal_bar
from plugins.power.features import HISTORY, OBSERVATION_SIZE
from plugins.power.ppo import Adam, Params, PpoConfig, init_params, ppo_update
from simulator.dedicated.catalog import ClusterLog, load_days
from simulator.dedicated.days import Day
from simulator.dedicated.rollout import Rollout, run_day
from simulator.dedicated.validation import Mapper, Selector, score, validation_split


class StopRequest:
    """SIGTERM/SIGINT ask the loop to stop after the iteration under way (which is then saved);
    the workers ignore both, so a Ctrl-C in the terminal cannot break the pool mid-iteration."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self.previous = {s: signal.signal(s, self.handle) for s in (signal.SIGTERM, signal.SIGINT)}

    def handle(self, signum: int, _frame: Any) -> None:
        self.signal = signal.Signals(signum).name

    def restore(self) -> None:
        for s, handler in self.previous.items():
            signal.signal(s, handler)


def _ignore_signals() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _play(task: tuple[ClusterLog, int, Params, int]) -> Rollout:
    log, day, params, seed = task
    train, _ = load_days(log)
    return run_day(params, train[day].jobs, seed, PpoConfig())


class Validation:
    """Plays candidates greedily on the validation days (training days only) and saves the one
    the ``Selector`` keeps as the ``-best`` checkpoint, the agent to ship."""

    def __init__(
        self, args: argparse.Namespace, train: list[Day], val: list[int], meta: dict[str, Any]
    ) -> None:
        self.args, self.val = args, val
        self.path = best_path(args.out, args.log.name)
        self.mapper: Mapper = lambda fn, tasks: run_parallel(
            fn, tasks, workers=args.workers, desc="validation days", progress=False
        )
        if val and not meta.get("validation"):
            t0 = score(self.mapper, args.log, val, None)
            meta["validation"] = {"days": [train[p].index for p in val], "t0": asdict(t0)}
        self.selector = Selector(meta["validation"]) if val else None
        if self.selector is not None:
            print(
                f"validation: {len(val)} training days held out; T(0) there: {self.selector.bound}"
            )

    def offer(self, label: str, params: Params, opt: Adam, meta: dict[str, Any]) -> None:
        if self.selector is None:
            return
        candidate = score(self.mapper, self.args.log, self.val, params)
        kept = self.selector.offer(label, candidate)
        if kept:
            save_checkpoint(self.path, params, opt, meta | {"selected": label})
        print(f"validation, {label}: waste {candidate.waste_kj:.1f} kJ, cycles "
              f"{candidate.cycles_per_node:.2f}/node, delay {candidate.delay_s:.1f} s"
              + (" (kept)" if kept else ""))  # fmt: skip


def train_power(args: argparse.Namespace) -> None:
    """The whole run: resume or start, warm start if asked, PPO until the budget or a stop."""
    train, test = load_days(args.log)
    fit, val = validation_split(train, args.val_stride)
    path = checkpoint_path(args.out, args.log.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    cfg = PpoConfig(lr=args.lr, entropy_coef=args.entropy, target_kl=args.target_kl)
    rng = np.random.default_rng(args.seed)
    if path.exists():
        params, adam_state, meta = load_checkpoint(path)
        opt = Adam(params, cfg.lr)
        opt.load(adam_state)
        rng.bit_generator.state = meta["rng"]
        print(f"resuming {path} at iteration {meta['iteration']}")
    else:
        inputs = HISTORY * OBSERVATION_SIZE
        params = init_params(inputs, args.hidden, args.levels + 1, rng, favour=(0, args.levels))
        meta = {"iteration": 0, "curve": [], "workload": args.log.name, "seconds": 0.0}
        meta["cluster"] = {"nodes": args.log.nodes, "cores_per_node": args.log.cores_per_node}
        opt = Adam(params, cfg.lr)
    stop = StopRequest()
    validation = Validation(args, train, val, meta)
    if meta["iteration"] == 0 and args.imitate_days > 0 and not path.exists():
        offer = lambda label: validation.offer(label, params, opt, meta)  # noqa: E731
        stopped = lambda: stop.signal is not None  # noqa: E731
        began = time.perf_counter()
        meta["imitation_accuracy"] = warm_start(params, fit, args, rng, stopped, offer)
        meta["warm_seconds"] = time.perf_counter() - began
        if stop.signal is not None:  # saved, a checkpoint would skip the warm start for good
            stop.restore()
            print(f"stopped by {stop.signal} during the warm start: nothing saved; run it again")
            return
        print(f"warm start (with its validations) took {meta['warm_seconds']:.1f} s")
        if validation.path.exists():  # continue from the warm round chosen on validation
            params.update(load_checkpoint(validation.path)[0])
        meta["rng"] = rng.bit_generator.state
        save_checkpoint(path.with_name(f"{path.stem}-warm.npz"), params, opt, meta)
        save_checkpoint(path, params, opt, meta)
    print(f"{args.log.name}: {len(fit)} training days to fit, {len(val)} to validate, "
          f"{len(test)} test days held out")  # fmt: skip
    prior_s = float(meta["seconds"])
    bar = terminal_bar(
        total=args.iterations, initial=meta["iteration"], desc="iterations", unit="it"
    )
    try:
        _train(params, opt, meta, path, train, fit, validation, stop, args, rng, bar)
    finally:
        stop.restore()
        bar.close()
    if stop.signal:
        print(f"stopped by {stop.signal} after iteration {meta['iteration']} (checkpoint saved)")
    plot_curve(meta["curve"], path.with_suffix(".png"), args.log.name, meta.get("validation"))
    print(f"checkpoint {path}; learning curve {path.with_suffix('.png')}")
    if "best" in (meta.get("validation") or {}):  # nothing validated yet: no agent chosen
        print(f"shipped agent {validation.path}: {meta['validation']['best']['label']}")
    agent = export_agent(args.out, args.log.name, agent_record(args, meta))
    print(f"agent for or-ppo: --set agent={agent}")
    print(f"iterations {meta['iteration']}; wall s this run {meta['seconds'] - prior_s:.1f}")


def agent_record(args: argparse.Namespace, meta: dict[str, Any]) -> dict[str, Any]:
    """What an agent file says of its training: log, cluster, observation layout, the command
    and the validation figures it was chosen on."""
    validation = {k: v for k, v in (meta.get("validation") or {}).items() if k != "history"}
    return {
        "log": args.log.name,
        "log_file": Path(args.log.path).name,
        "cluster": {"nodes": args.log.nodes, "cores_per_node": args.log.cores_per_node},
        "observation": {"history": HISTORY, "per_step": OBSERVATION_SIZE},
        "command": "htcondor-advisor " + " ".join(sys.argv[1:]),
        "iterations": meta["iteration"],
        "validation": validation,
    }


def _train(
    params: Params, opt: Adam, meta: dict[str, Any], path: Path, train: list[Day], fit: list[int],
    validation: Validation, stop: StopRequest, args: argparse.Namespace,
    rng: np.random.Generator, bar: tqdm,
) -> None:  # fmt: skip
    """PPO iterations on fit days until the budget or a stop request; a checkpoint after each
    one, and a validation of the greedy agent every ``--val-interval`` iterations."""
    cfg = PpoConfig(lr=args.lr, entropy_coef=args.entropy, target_kl=args.target_kl)
    began, prior_s = time.perf_counter(), float(meta["seconds"])
    workers = max(1, args.workers)
    with ProcessPoolExecutor(max_workers=workers, initializer=_ignore_signals) as pool:
        validation.mapper = pool.map
        while meta["iteration"] < args.iterations and stop.signal is None:
            if (time.perf_counter() - began) / 60 >= args.minutes:
                print(f"time budget of {args.minutes} minutes reached")
                break
            days = [fit[i] for i in rng.integers(0, len(fit), args.actors)]
            seeds = rng.integers(0, 2**31, args.actors).tolist()
            tasks = [(args.log, d, params, s) for d, s in zip(days, seeds, strict=False)]
            rollouts = list(pool.map(_play, tasks))
            batch = {
                key: np.concatenate([getattr(r, key) for r in rollouts])
                for key in ("obs", "act", "logp", "adv", "ret")
            }
            critic_only = meta["iteration"] < args.critic_iterations
            stats = ppo_update(params, opt, batch, cfg, rng, ("wv", "bv") if critic_only else ())
            meta["iteration"] += 1
            meta["curve"].append(
                {
                    "iteration": meta["iteration"],
                    "days": [train[d].index for d in days],
                    "return": float(np.mean([r.episode_return for r in rollouts])),
                    "waste_kj": float(np.mean([r.metrics.waste_kj for r in rollouts])),
                    "cycles": float(np.mean([r.metrics.cycles_per_node for r in rollouts])),
                    **stats,
                }
            )
            meta["rng"] = rng.bit_generator.state
            meta["seconds"] = prior_s + time.perf_counter() - began
            if meta["iteration"] % max(1, args.val_interval) == 0:
                validation.offer(f"iteration {meta['iteration']}", params, opt, meta)
            save_checkpoint(path, params, opt, meta)
            bar.set_postfix(ret=f"{meta['curve'][-1]['return']:.1f}")
            bar.update()
