"""``htcondor-advisor``: one entry point, a subcommand per job (see ``advisor/commands``)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from advisor.commands import (
    bench,
    bench_daemon,
    check_config,
    experiment,
    explain,
    policies,
    replay,
    scenario,
    trace_export,
    train_idle,
    train_power,
)
from advisor.commands import run as run_command
from advisor.lab.model_store import ModelStoreError
from plugins.contract.config_checks import ConfigError
from plugins.contract.policy import OptionError
from simulator.sources import SourceError
from simulator.traces import TraceError

COMMANDS = (
    scenario,
    replay,
    policies,
    bench,
    experiment,
    run_command,
    check_config,
    explain,
    bench_daemon,
    trace_export,
    train_power,
    train_idle,
)
USER_ERRORS: tuple[type[Exception], ...] = (OptionError, ConfigError, SourceError, TraceError)
USER_ERRORS += (FileNotFoundError, ModelStoreError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="htcondor-advisor",
        description="Energy-aware, learning scheduling advice for HTCondor pools.",
    )
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.handler(args) or 0)
    except USER_ERRORS as exc:
        print(f"htcondor-advisor {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
