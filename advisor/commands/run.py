"""``run``: the advisor daemon, live (``pool.kind: condor``) or as the digital twin (``sim``).

The daemon's modules are imported once the arguments are parsed; the twin's (the simulator, the
bench) only for a simulated pool, so a live daemon never loads them.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.arg_types import count, output_directory, positive_number, whole_number
from advisor.commands.replay import progress_bar

if TYPE_CHECKING:
    from advisor.daemon.config import DaemonConfig
    from advisor.daemon.signals import Control

log = logging.getLogger("htcondor_advisor.run")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="YAML configuration (see examples/)")
    parser.add_argument("--pool", help="override the pool, e.g. sim:campus")
    parser.add_argument("--days", type=count, help="twin: simulated days")
    parser.add_argument("--scale", type=positive_number, help="twin: pool size factor")
    parser.add_argument("--seed", type=whole_number, help="twin: scenario and tie-break seed")
    parser.add_argument("--speed", help="twin: simulated s per wall s, or max")
    parser.add_argument("--policy", help="override policy.name")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="policy option")
    parser.add_argument("--state-dir", type=Path, help="override state.directory")
    parser.add_argument("--snapshot-interval", help="override state.snapshot_interval")
    parser.add_argument("--listen", help="override publish.listen (HOST:PORT, port 0: any)")
    parser.add_argument(
        "--out", type=output_directory, help="twin: write summary.json and jobs.csv here"
    )
    parser.add_argument(
        "--control-percent", type=int, help="override control.percent (the control group)"
    )
    parser.add_argument("--once", action="store_true", help="run one cycle, snapshot, exit")
    parser.add_argument("--dry-run", action="store_true", help="compute and log, publish nothing")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(handler=run)


def overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The command line as configuration sections (checked like the file)."""
    from plugins.contract.option_pairs import parse_sets

    out: dict[str, dict[str, Any]] = {}
    if args.pool:
        kind, _, arg = args.pool.partition(":")
        out["pool"] = {"kind": kind, **({"scenario": arg} if arg else {})}
    for key in ("days", "scale", "seed", "speed"):
        value = getattr(args, key)
        if value is not None:
            out.setdefault("pool", {})[key] = value
    if args.policy:
        out.setdefault("policy", {})["name"] = args.policy
    if args.set:
        out.setdefault("policy", {})["options"] = parse_sets(args.set)
    state_dir = args.state_dir
    if state_dir is None and args.config is None and args.out is not None:
        state_dir = args.out / "state"
    if state_dir is not None:  # a path typed here is the shell's, relative to where it runs
        out.setdefault("state", {})["directory"] = str(state_dir.absolute())
    if args.snapshot_interval:
        out.setdefault("state", {})["snapshot_interval"] = args.snapshot_interval
    if args.listen:
        out.setdefault("publish", {})["listen"] = args.listen
    if args.dry_run:
        out.setdefault("publish", {})["dry_run"] = True
    if args.control_percent is not None:
        out.setdefault("control", {})["percent"] = args.control_percent
    return out


def resolve(args: argparse.Namespace) -> DaemonConfig:
    from advisor.daemon.config import check_config, load_config
    from advisor.daemon.config_file import merge
    from advisor.daemon.fields import ConfigError

    extra = overrides(args)
    if args.config is None and "pool" not in extra:
        raise ConfigError("give --config FILE or --pool sim:campus")
    try:
        if args.config is not None:
            return load_config(args.config, extra)
        return check_config(merge({}, extra), "<command line>")
    except ConfigError as exc:
        raise ConfigError(flags_named(str(exc), args)) from None


FLAG_KEYS = {
    "pool": "pool.kind",
    "policy": "policy.name",
    "state_dir": "state.directory",
    "days": "pool.days",
    "scale": "pool.scale",
    "seed": "pool.seed",
    "speed": "pool.speed",
    "snapshot_interval": "state.snapshot_interval",
    "listen": "publish.listen",
    "control_percent": "control.percent",
}
"""The command line's options that set a configuration key (``overrides``)."""


def flags_named(errors: str, args: argparse.Namespace) -> str:
    """The configuration's errors, each about a key the command line set naming its option too:
    ``--days`` on a live pool is the option's mistake, not the file's."""
    given = {f"{key}:": name for name, key in FLAG_KEYS.items() if getattr(args, name) is not None}
    lines = []
    for line in errors.splitlines():
        key, _, rest = line.partition(" ")
        name = given.get(key)
        lines.append(f"--{name.replace('_', '-')} ({key[:-1]}): {rest}" if name else line)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from advisor.daemon.config_host import check_host, listen_error
    from advisor.daemon.fields import ConfigError
    from advisor.daemon.logs import setup_daemon_logging
    from advisor.daemon.signals import Control
    from advisor.daemon.state_access import state_directory_held
    from advisor.lab.config_inputs import check_inputs

    config = resolve(args)
    try:  # the state directory made 0700, paths and host checked
        check_host(config, starting=True)
    except ConfigError as exc:
        raise ConfigError(flags_named(str(exc), args)) from None
    check_inputs(config)
    setup_daemon_logging(config.logging["level"])
    control = Control()
    control.install()
    try:
        with state_directory_held(Path(config.state["directory"])):
            if config.simulated:
                return _run_twin(config, control, args)
            return _run_live(config, control, args)
    except OSError as exc:  # the endpoint's bind: one located line, not a traceback
        key = "--listen" if args.listen else "publish.listen"
        error = listen_error(config.publish["listen"], exc, key)
        if error is None:
            raise
        raise error from None


def _run_twin(config: DaemonConfig, control: Control, args: argparse.Namespace) -> int:
    from advisor.lab.twin_run import TwinOptions, run_twin
    from simulator.campus.summary import format_table

    show = not args.no_progress and config.pool["speed"] is None
    with progress_bar(show) as update:
        opts = TwinOptions(args.out, args.config, overrides(args), args.once, update)
        outcome = run_twin(config, control, opts)
    if outcome.summary is not None:
        print(format_table(outcome.summary))
        if args.out is not None:
            print(f"wrote {args.out / 'summary.json'} and {args.out / 'jobs.csv'}")
    return 0


def live_pool_settings(config: DaemonConfig, policy_label: str) -> dict[str, Any]:
    """The pool section plus what the daemon owns: its state directory (the source's journal,
    read by ``trace export --state``), the advice lifetime and the ``AdvisorPolicy`` label."""
    journal = config.pool.get("journal", False)
    return {
        **config.pool,
        "state_dir": str(config.state["directory"]) if journal else None,
        "advice_lifetime_s": config.publish["advice_lifetime"],
        "policy": policy_label,
        "control_percent": config.control["percent"],
    }


def _run_live(config: DaemonConfig, control: Control, args: argparse.Namespace) -> int:
    from advisor.condor.factory import collector_address
    from advisor.daemon.logs import iso
    from advisor.daemon.pools import POOL_KINDS
    from advisor.daemon.runtime import Daemon, make_policy
    from advisor.daemon.schedule import run_live
    from advisor.lab.model_store import warm_start
    from advisor.lab.relearn import missed_retraining, refit_at_start, relearn, trained_until

    kind = POOL_KINDS[config.pool["kind"]]
    assert kind.build is not None, "every live pool kind has a factory"
    machines: dict = {}
    policy = make_policy(config, machines)
    settings = live_pool_settings(config, policy.label)
    source, sinks = kind.build(settings)
    daemon = Daemon(config, policy, source, sinks, time.time, machines)
    resumed = daemon.resume()
    journal = settings["state_dir"]
    relearn(daemon.host, resumed, None if journal is None else Path(journal))
    had = trained_until(policy)
    warm_start(policy, config.learning["idle_models"])
    fit_until = had if refit_at_start(policy, had) else None
    if args.once:
        advice = daemon.host.cycle(time.time())
        daemon.snapshot(time.time())
        if daemon.host.confirmed_at is None:  # no view of the pool: nothing was advised
            collector = collector_address(config.pool["collector"])
            print(
                f"htcondor-advisor run: error: pool.collector: the pool did not answer at "
                f"{collector}; check that its collector runs there and lets this host read",
                file=sys.stderr,
            )
            return 1
        print(json.dumps({"machines": len(advice.machines), "jobs": len(advice.jobs)}))
        return 0

    def reload() -> None:
        if args.config is not None:
            daemon.reload(args.config, overrides(args), None)

    saved_at = daemon.metrics.last_snapshot if resumed is not None else None
    crontab = config.learning["retrain"]
    missed = missed_retraining(policy, crontab, had, saved_at, time.time())
    if missed is not None:
        log.warning("the retraining due at %s did not run: retraining now", iso(missed))
        fit_until = time.time()

    run_live(daemon, control, reload, refit_until=fit_until)
    return 0
