"""``train-power``: train the ``or-ppo`` agent on a dedicated-cluster log's training days.

Each iteration, ``--actors`` days drawn uniformly from the training days (never a test day) are
played by the sampling agent in ``--workers`` processes, then PPO updates the weights (section
4.3). A checkpoint after every iteration makes the run resumable; the learning curve is a PNG.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from advisor.parallel import run_parallel
from plugins.power.features import HISTORY, OBSERVATION_SIZE
from plugins.power.ppo import Adam, Params, PpoConfig, imitate, init_params, ppo_update
from simulator.dedicated.catalog import CATALOG, default_data_dir, load_days
from simulator.dedicated.days import Day
from simulator.dedicated.rollout import Rollout, run_day, teacher_day


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("train-power", help="train the or-ppo power agent (paper 001)")
    parser.add_argument("workload", choices=sorted(CATALOG))
    parser.add_argument("--out", default="runs/power", help="checkpoint and curve directory")
    parser.add_argument("--data-dir", default=default_data_dir())
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=25.0, help="stop after this wall time")
    parser.add_argument("--actors", type=int, default=2, help="days played per iteration")
    parser.add_argument("--workers", type=int, default=2, help="processes (the machine has 2)")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--levels", type=int, default=8, help="reservation sizes k*G/levels")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--imitate-days", type=int, default=0,
        help="warm start: clone OR* on this many training days before PPO (0: from scratch)",
    )  # fmt: skip
    parser.add_argument(
        "--dagger-rounds", type=int, default=0,
        help="after cloning, rounds in which the clone drives training days and OR* labels them",
    )  # fmt: skip
    parser.add_argument("--dagger-days", type=int, default=10, help="training days per round")
    parser.add_argument(
        "--balance", type=float, default=1.0,
        help="class weighting of the cloning (1: balanced, 0: plain); below 1 releases less",
    )  # fmt: skip
    parser.add_argument(
        "--graded-release", action="store_true",
        help="clone OR*'s release sizes as levels (default: any release is level 0)",
    )  # fmt: skip
    parser.add_argument("--lr", type=float, default=PpoConfig.lr, help="Adam step size")
    parser.add_argument("--entropy", type=float, default=PpoConfig.entropy_coef)
    parser.add_argument("--target-kl", type=float, default=0.0, help="KL early stop (0: off)")
    parser.add_argument(
        "--critic-iterations", type=int, default=0,
        help="first fit only the critic's head on this many iterations (actor unchanged)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def checkpoint_path(out: str, workload: str) -> Path:
    return Path(out) / f"or-ppo-{workload}.npz"


def save_checkpoint(path: Path, params: Params, opt: Adam, meta: dict[str, Any]) -> None:
    """Weights, Adam moments and the run's progress, replaced atomically."""
    arrays = {f"p_{k}": v for k, v in params.items()}
    arrays |= {f"m_{k}": v for k, v in opt.m.items()} | {f"v_{k}": v for k, v in opt.v.items()}
    tmp = path.with_suffix(".tmp.npz")
    arrays["meta"] = np.array(json.dumps(meta | {"adam_t": opt.t}))
    np.savez(tmp, **arrays)  # type: ignore[arg-type]  # numpy stubs mistype **kwds
    os.replace(tmp, path)


def load_checkpoint(path: Path) -> tuple[Params, dict[str, Any], dict[str, Any]]:
    """Weights, Adam state and metadata of a checkpoint written by ``save_checkpoint``."""
    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        pick = lambda prefix: {k[2:]: data[k] for k in data.files if k.startswith(prefix)}  # noqa: E731
        params, adam = pick("p_"), {"t": meta["adam_t"], "m": pick("m_"), "v": pick("v_")}
    return params, adam, meta


def _teach(
    task: tuple[str, str, int, int, Params | None, bool],
) -> tuple[np.ndarray, np.ndarray]:
    workload, data_dir, day, levels, student, graded = task
    train, _ = load_days(workload, data_dir)
    return teacher_day(train[day].jobs, levels, student, graded)


def warm_start(
    params: Params, train: list[Day], args: argparse.Namespace, rng: Any, stop: StopRequest
) -> float:
    """Clone OR*'s hold/release choices on training days (never a test day), then DAgger rounds:
    the clone plays more training days, OR* labels the states it reached, and the clone is
    retrained on everything gathered so far."""
    obs: list[np.ndarray] = []
    act: list[np.ndarray] = []
    accuracy = 0.0
    for round_ in range(1 + args.dagger_rounds):
        if stop.signal:
            break
        many = args.imitate_days if round_ == 0 else args.dagger_days
        days = rng.choice(len(train), min(many, len(train)), replace=False).tolist()
        student = None if round_ == 0 else params
        tasks = [
            (args.workload, args.data_dir, d, args.levels, student, args.graded_release)
            for d in days
        ]
        pairs = run_parallel(_teach, tasks, workers=args.workers, desc=f"OR* days, round {round_}")
        obs += [p[0] for p in pairs]
        act += [p[1] for p in pairs]
        labels = np.concatenate(act)
        accuracy = imitate(params, np.concatenate(obs), labels, 8, PpoConfig(), rng, args.balance)
        print(f"warm start round {round_}: {len(days)} days, {len(labels)} decisions "
              f"({np.mean(labels > 0):.3f} hold), balanced accuracy {accuracy:.3f}")  # fmt: skip
    return accuracy


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


def _play(task: tuple[str, str, int, Params, int]) -> Rollout:
    workload, data_dir, day, params, seed = task
    train, _ = load_days(workload, data_dir)
    return run_day(params, train[day].jobs, seed, PpoConfig())


def run(args: argparse.Namespace) -> int:
    train, test = load_days(args.workload, args.data_dir)
    path = checkpoint_path(args.out, args.workload)
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
        meta = {"iteration": 0, "curve": [], "workload": args.workload, "seconds": 0.0}
        opt = Adam(params, cfg.lr)
    stop = StopRequest()
    if meta["iteration"] == 0 and args.imitate_days > 0 and not path.exists():
        meta["imitation_accuracy"] = warm_start(params, train, args, rng, stop)
        meta["rng"] = rng.bit_generator.state
        save_checkpoint(path.with_name(f"{path.stem}-warm.npz"), params, opt, meta)
        save_checkpoint(path, params, opt, meta)
    print(f"{args.workload}: {len(train)} training days, {len(test)} test days held out")
    prior_s = float(meta["seconds"])
    bar = tqdm(total=args.iterations, initial=meta["iteration"], desc="iterations", unit="it")
    try:
        _train(params, opt, meta, path, train, stop, args, rng, bar)
    finally:
        stop.restore()
        bar.close()
    if stop.signal:
        print(f"stopped by {stop.signal} after iteration {meta['iteration']} (checkpoint saved)")
    plot_curve(meta["curve"], path.with_suffix(".png"), args.workload)
    print(f"checkpoint {path}; learning curve {path.with_suffix('.png')}")
    print(f"iterations {meta['iteration']}; wall s this run {meta['seconds'] - prior_s:.1f}")
    return 0


def _train(
    params: Params, opt: Adam, meta: dict[str, Any], path: Path, train: list[Day],
    stop: StopRequest, args: argparse.Namespace, rng: np.random.Generator, bar: tqdm,
) -> None:  # fmt: skip
    """PPO iterations until the budget or a stop request; a checkpoint after each one."""
    cfg = PpoConfig(lr=args.lr, entropy_coef=args.entropy, target_kl=args.target_kl)
    began, prior_s = time.perf_counter(), float(meta["seconds"])
    workers = max(1, args.workers)
    with ProcessPoolExecutor(max_workers=workers, initializer=_ignore_signals) as pool:
        while meta["iteration"] < args.iterations and stop.signal is None:
            if (time.perf_counter() - began) / 60 >= args.minutes:
                print(f"time budget of {args.minutes} minutes reached")
                break
            days = rng.integers(0, len(train), args.actors).tolist()
            seeds = rng.integers(0, 2**31, args.actors).tolist()
            tasks = [
                (args.workload, args.data_dir, d, params, s)
                for d, s in zip(days, seeds, strict=False)
            ]
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
            save_checkpoint(path, params, opt, meta)
            bar.set_postfix(ret=f"{meta['curve'][-1]['return']:.1f}")
            bar.update()


def plot_curve(curve: list[dict[str, float]], png: Path, title: str) -> None:
    """Episode return and daily waste per iteration, with a 10-iteration moving average."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not curve:
        return
    it = [c["iteration"] for c in curve]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, key, label in zip(
        axes, ("return", "waste_kj"), ("episode return", "waste kJ/day"), strict=False
    ):
        y = np.array([c[key] for c in curve])
        ax.plot(it, y, alpha=0.3)
        k = min(10, len(y))
        ax.plot(it[k - 1 :], np.convolve(y, np.ones(k) / k, mode="valid"))
        ax.set_xlabel("iteration")
        ax.set_ylabel(label)
    fig.suptitle(f"or-ppo learning curve, {title} (training days)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
