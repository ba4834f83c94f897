"""The warm start of ``train-power``: clone OR* on training days, then DAgger rounds.

Cloning and DAgger draw only from the days they are given (the fit days: training days minus
the validation days); after every round ``offer`` may play the clone on validation days.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from advisor.lab.parallel import run_parallel
from plugins.power.ppo import Params, PpoConfig, imitate
from simulator.dedicated.catalog import ClusterLog, load_days
from simulator.dedicated.rollout import teacher_day


def _teach(
    task: tuple[ClusterLog, int, int, Params | None, bool],
) -> tuple[np.ndarray, np.ndarray]:
    log, day, levels, student, graded = task
    train, _ = load_days(log)
    return teacher_day(train[day].jobs, levels, student, graded)


def warm_start(
    params: Params, fit: list[int], args: argparse.Namespace, rng: Any,
    stopped: Callable[[], bool], offer: Callable[[str], None],
) -> float:  # fmt: skip
    """Clone OR*'s hold/release choices on fit days (never a test or validation day), then
    DAgger rounds: the clone plays more fit days, OR* labels the states it reached, and the
    clone is retrained on everything gathered so far. Returns the last balanced accuracy."""
    obs: list[np.ndarray] = []
    act: list[np.ndarray] = []
    accuracy = 0.0
    for round_ in range(1 + args.dagger_rounds):
        if stopped():
            break
        many = args.imitate_days if round_ == 0 else args.dagger_days
        days = rng.choice(fit, min(many, len(fit)), replace=False).tolist()
        student = None if round_ == 0 else params
        tasks = [(args.log, d, args.levels, student, args.graded_release) for d in days]
        pairs = run_parallel(_teach, tasks, workers=args.workers, desc=f"OR* days, round {round_}")
        obs += [p[0] for p in pairs]
        act += [p[1] for p in pairs]
        labels = np.concatenate(act)
        accuracy = imitate(
            params, np.concatenate(obs), labels, args.imitate_epochs, PpoConfig(), rng,
            args.balance,
        )  # fmt: skip
        print(f"warm start round {round_}: {len(days)} days, {len(labels)} decisions "
              f"({np.mean(labels > 0):.3f} hold), balanced accuracy {accuracy:.3f}")  # fmt: skip
        offer(f"warm round {round_}")
    return accuracy
