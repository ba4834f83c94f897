"""Drive the daemon over the simulated pool: ``htcondor-advisor run --pool sim:campus``."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from advisor.daemon.config import DaemonConfig
from advisor.daemon.control_group import ControlGroup
from advisor.daemon.logs import iso
from advisor.daemon.notify import sd_notify
from advisor.daemon.runtime import Daemon, make_policy
from advisor.daemon.signals import Control
from advisor.daemon.watchdog import ping_while_alive, watchdog_interval
from advisor.lab.model_store import warm_start
from advisor.lab.relearn import RelearningSource, feed, refit_at_start, trained_until
from advisor.lab.twin import NegotiatorBridge, Pace, Stopped, TwinPool, next_cron, shadow_host
from plugins.contract.registry import policy_class
from simulator.campus.oracle import TraceOracle
from simulator.campus.pool import PoolRules
from simulator.campus.replay import ReplayResult, build_world, machine_infos
from simulator.campus.summary import summarize, write_outputs
from simulator.sources import SourceSpec, assemble
from simulator.trace_model import DAY

log = logging.getLogger("htcondor_advisor.twin")


@dataclass
class TwinOptions:
    out: Path | None = None
    config_path: Path | None = None
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    once: bool = False
    on_progress: Callable[[float], None] | None = None


@dataclass
class TwinOutcome:
    finished: bool
    sim_time: float
    summary: dict[str, Any] | None
    daemon: Daemon


def run_twin(config: DaemonConfig, control: Control, opts: TwinOptions) -> TwinOutcome:
    """Run until the trace ends (summary written) or a stop is requested (snapshot only)."""
    pool = config.pool
    spec = SourceSpec(
        scenario=pool["scenario"],
        scenario_config=pool["scenario_config"],
        days=pool["days"],
        scale=pool["scale"],
        seed=pool["seed"],
    )
    trace, notes = assemble(spec)
    for note in notes:
        log.info(note)
    machines = machine_infos(trace)
    reboot_hour = pool["reboot_hour"]
    needs_oracle = policy_class(config.policy["name"]).NEEDS_ORACLE
    oracle = TraceOracle(trace, reboot_hour) if needs_oracle else None
    twin = TwinPool(pool, machines)
    bridge = NegotiatorBridge(twin)
    rules = PoolRules(  # the bound and the control group as the shipped expressions apply them
        reboot_hour=reboot_hour,
        wait_bound_s=pool["wait_bound"],
        control_percent=config.control["percent"] or None,
    )
    world = build_world(trace, bridge, pool["seed"], rules, 60.0, twin.emit, twin.emit)
    engine = world.engine
    twin.clock = engine.now
    daemon = Daemon(config, make_policy(config, machines, oracle), twin, [twin], engine.now)
    daemon.resume()
    had = trained_until(daemon.host.policy)
    warm_start(daemon.host.policy, config.learning["idle_models"])
    refit = refit_at_start(daemon.host.policy, had)
    resume_at = twin.resume_at
    lifetime = config.publish["advice_lifetime"]
    if resume_at is not None:
        log.info("re-simulating the pool up to the snapshot's time %s", iso(resume_at))
        shadow = make_policy(config, machines, oracle)
        warm_start(shadow, config.learning["idle_models"])  # as the stopped daemon began
        journal = RelearningSource(twin, daemon.host, resume_at)  # the live daemon's journal
        bridge.host = shadow_host(shadow, twin, lifetime, engine.now, journal)
        if config.control["percent"]:  # its guard acts as the stopped daemon's did
            bridge.host.control = ControlGroup(config.control, None)
    else:
        bridge.host = daemon.host
    address = daemon.start_endpoint()
    sd_notify(f"READY=1\nSTATUS=twin serving advice on {address}")
    interval = watchdog_interval()
    if interval is not None:
        ping_while_alive(interval, lambda: sd_notify("WATCHDOG=1"))

    trigger = CronTrigger.from_crontab(config.learning["retrain"], timezone="UTC")
    interval = config.state["snapshot_interval"]
    loop = {
        "retrain": next_cron(trigger, trace.start),
        "snapshot": (resume_at if resume_at is not None else trace.start) + interval,
        "progress": trace.start,
    }
    pace = Pace(pool["speed"])
    pace.restart(trace.start)
    span = max(trace.end - trace.start, 1.0)

    def hand_over(t: float) -> None:
        nonlocal resume_at
        assert resume_at is not None
        feed(daemon.host, [e for e in twin.buffer if e.time <= resume_at])
        twin.buffer.clear()  # the restored policy has already learned from the rest
        if refit and had is not None:  # the models the stopped daemon had
            daemon.host.retrain(had)
        bridge.host = daemon.host
        resume_at = None
        pace.restart(t)
        log.info("pool re-simulated to %s; the restored policy takes over", iso(t))

    def on_advance(t: float) -> None:
        if resume_at is not None and t >= resume_at:
            hand_over(t)
        if opts.on_progress is not None and t >= loop["progress"]:
            loop["progress"] = t + DAY
            opts.on_progress((t - trace.start) / span)
        if resume_at is not None:
            if t >= loop["retrain"]:
                _retrain(bridge, t)
                loop["retrain"] = next_cron(trigger, t)
            return
        if control.reload.is_set():
            control.reload.clear()
            _reload(daemon, opts, oracle)
        if control.stop.is_set() or (opts.once and daemon.host.cycles):
            raise Stopped
        if t >= loop["snapshot"]:
            daemon.host.observe(t)
            daemon.snapshot(t)
            loop["snapshot"] = t + interval
        if t >= loop["retrain"]:
            _retrain(bridge, t)
            loop["retrain"] = next_cron(trigger, t)
        pace.wait_for(t, control.stop.is_set)

    began, cpu = time.perf_counter(), time.process_time()
    try:
        engine.run(trace.end, on_advance)
    except Stopped:
        now = engine.now()
        daemon.host.observe(now)
        path = daemon.snapshot(now)
        saved = f"{path.name} saved" if path is not None else "no snapshot written (said above)"
        log.info("stopped at simulated %s; %s; run again to resume", iso(now), saved)
        daemon.stop_endpoint()
        return TwinOutcome(False, now, None, daemon)
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    if resume_at is not None:
        hand_over(trace.end)
    daemon.host.observe(trace.end)
    daemon.snapshot(trace.end)
    daemon.stop_endpoint()
    world.close(trace.end)
    result = ReplayResult(
        daemon.host.policy.label,
        trace,
        world.pool,
        world.book,
        world.months,
        world.negotiator,
        engine.events,
        wall,
        cpu,
    )
    summary = summarize(result)
    if opts.out is not None:
        write_outputs(result, summary, opts.out)
    return TwinOutcome(True, trace.end, summary, daemon)


def _retrain(bridge: NegotiatorBridge, t: float) -> None:
    host = bridge.host
    assert host is not None
    host.observe(t)
    host.retrain(t)


def _reload(daemon: Daemon, opts: TwinOptions, oracle: TraceOracle | None) -> None:
    if opts.config_path is None:
        logging.getLogger("htcondor_advisor.daemon").warning(
            "SIGHUP: no configuration file was given (--config); nothing to reload"
        )
        return
    sd_notify("RELOADING=1")
    daemon.reload(opts.config_path, opts.overrides, oracle)
    sd_notify("READY=1")
