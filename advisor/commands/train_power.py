"""``train-power``: train the ``or-ppo`` agent on a dedicated-cluster log's training days
(``advisor.lab.power_training``); a checkpoint after every iteration makes a run resumable."""

from __future__ import annotations

import argparse
from pathlib import Path

from advisor.arg_types import (
    count,
    fraction,
    non_negative,
    output_directory,
    positive_number,
    unreadable,
    whole_number,
)
from advisor.lab.power_logs import add_log_arguments
from plugins.power.ppo import PpoConfig


def register(parser: argparse.ArgumentParser) -> None:
    add_log_arguments(parser)
    parser.add_argument(
        "--out", type=output_directory, default="runs/power", help="checkpoint and curve directory"
    )
    parser.add_argument(
        "--iterations",
        type=whole_number,
        default=200,
        help="PPO iterations (0: the warm start only)",
    )
    parser.add_argument(
        "--minutes", type=positive_number, default=25.0, help="stop after this wall time"
    )
    parser.add_argument("--actors", type=count, default=2, help="days played per iteration")
    parser.add_argument("--workers", type=count, default=2, help="processes (default: 2)")
    parser.add_argument("--hidden", type=count, default=64)
    parser.add_argument("--levels", type=count, default=8, help="reservation sizes k*G/levels")
    parser.add_argument("--seed", type=whole_number, default=0)
    parser.add_argument(
        "--imitate-days", type=whole_number, default=0,
        help="warm start: clone OR* on this many training days before PPO (0: from scratch)",
    )  # fmt: skip
    parser.add_argument(
        "--dagger-rounds", type=whole_number, default=0,
        help="after cloning, rounds in which the clone drives training days and OR* labels them",
    )  # fmt: skip
    parser.add_argument("--dagger-days", type=count, default=10, help="training days per round")
    parser.add_argument(
        "--balance", type=fraction, default=1.0,
        help="class weighting of the cloning (1: balanced, 0: plain); below 1 releases less",
    )  # fmt: skip
    parser.add_argument(
        "--graded-release", action="store_true",
        help="clone OR*'s release sizes as levels (default: any release is level 0)",
    )  # fmt: skip
    parser.add_argument("--imitate-epochs", type=count, default=8, help="cloning passes per round")
    parser.add_argument(
        "--val-stride", type=whole_number, default=5,
        help="every Nth training day is a validation day that picks the shipped agent (0: none)",
    )  # fmt: skip
    parser.add_argument(
        "--val-interval", type=count, default=10, help="PPO iterations between validations"
    )
    parser.add_argument("--lr", type=positive_number, default=PpoConfig.lr, help="Adam step size")
    parser.add_argument("--entropy", type=non_negative, default=PpoConfig.entropy_coef)
    parser.add_argument(
        "--target-kl", type=non_negative, default=0.0, help="KL early stop (0: off)"
    )
    parser.add_argument(
        "--critic-iterations", type=whole_number, default=0,
        help="first fit only the critic's head on this many iterations (actor unchanged)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from advisor.lab.power_logs import chosen_logs
    from advisor.lab.power_training import train_power
    from plugins.contract.config_checks import ConfigError

    for option in ("swf", "jobs"):  # named before the work, not as a bare [Errno 2]
        problem = getattr(args, option) and unreadable(Path(getattr(args, option)))
        if problem:
            raise ConfigError(f"--{option}: {problem}")
    logs = chosen_logs(args)
    if len(logs) != 1:
        raise ConfigError("train-power trains on one log: a name, --swf FILE or --jobs FILE")
    args.log = logs[0]
    train_power(args)
    return 0
