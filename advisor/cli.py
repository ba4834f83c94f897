"""``htcondor-advisor``: one entry point, a subcommand per job (see ``advisor/commands``).

Only the chosen command's module is imported: the daemon (``run``) must start without loading
the simulator, the research bench, matplotlib or scikit-learn that other commands need.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

COMMANDS = {  # name: (module in advisor.commands, one-line help)
    "scenario": ("scenario", "generate a scenario's trace files and plots"),
    "replay": ("replay", "replay a trace under a policy"),
    "policies": ("policies", "list the policies, the models each serves, their options"),
    "bench": ("bench", "measure the simulator"),
    "experiment": ("experiment", "reproduce a paper's figures (CSV and PNG)"),
    "run": ("run", "run the advisor daemon (live, or the digital twin)"),
    "check-config": ("check_config", "validate a daemon configuration file"),
    "explain": ("explain", "why a machine has its advice"),
    "report": ("report", "the control group's estimate of the advice's effect"),
    "bench-daemon": ("bench_daemon", "measure the daemon (cycle CPU, memory, crashes)"),
    "trace": ("trace", "trace files from a live advisor or a pool's history"),
    "train-power": ("train_power", "train the or-ppo power agent (paper 001)"),
    "train-idle": ("train_idle", "train and store idle-time models (paper 004)"),
}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
VERBS = ("verb", "experiment")
"""Where ``trace`` and ``experiment`` keep their second word, named in an error with the first."""
USER_ERRORS = (  # (module, class): a mistake the user can fix, shown as one line
    ("builtins", "FileNotFoundError"),
    ("plugins.contract.policy", "OptionError"),
    ("plugins.contract.config_checks", "ConfigError"),
    ("simulator.sources", "SourceError"),
    ("simulator.traces.errors", "TraceError"),
    ("advisor.lab.model_store", "ModelStoreError"),
    ("advisor.lab.sweep.record", "SweepError"),
)


def user_errors() -> tuple[type[Exception], ...]:
    """The user-error classes of the modules loaded so far: an exception cannot come from a
    module never imported, so catching them needs no import of a heavy package."""
    return tuple(getattr(sys.modules[m], name) for m, name in USER_ERRORS if m in sys.modules)


def chosen_command(argv: Sequence[str]) -> str | None:
    """The first word of ``argv`` that names a command (the one top-level option, --log-level,
    takes a level, never a command name)."""
    return next((word for word in argv if word in COMMANDS), None)


def build_parser(chosen: str | None) -> argparse.ArgumentParser:
    """Every command listed; only ``chosen`` gets its arguments (its module is imported)."""
    parser = argparse.ArgumentParser(
        prog="htcondor-advisor",
        description="Energy-aware, learning scheduling advice for HTCondor pools.",
    )
    parser.add_argument(
        "--log-level",
        type=str.upper,
        choices=LOG_LEVELS,
        default="INFO",
        help=", ".join(LOG_LEVELS),
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, summary) in COMMANDS.items():
        command = sub.add_parser(name, help=summary, description=summary)
        if name == chosen:
            importlib.import_module(f"advisor.commands.{module}").register(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(chosen_command(words)).parse_args(words)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:  # the reader left (`| head`): not an error of ours to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback (the daemon has its own)
        out = vars(args).get("out")
        kept = f"; what {out} holds may be incomplete: run it again" if out else ""
        print(f"htcondor-advisor {args.command}: interrupted{kept}", file=sys.stderr)
        return 130
    except Exception as exc:
        if not isinstance(exc, user_errors()):
            raise
        said = " ".join(str(w) for w in (args.command, *(vars(args).get(d) for d in VERBS)) if w)
        for line in str(exc).splitlines() or [""]:  # a configuration's errors: one a line
            print(f"htcondor-advisor {said}: error: {line}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
