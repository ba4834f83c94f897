"""One running advisor assembled from its configuration: host, board, metrics, store, endpoint.

Both drivers use it: the live scheduler (``schedule.py``) and the digital twin (``twin.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.daemon.board import AdviceBoard, as_json
from advisor.daemon.config import DaemonConfig, load_config
from advisor.daemon.explain import explain_machine
from advisor.daemon.fields import ConfigError
from advisor.daemon.host import PolicyHost
from advisor.daemon.http_endpoint import AdviceServer, Endpoint
from advisor.daemon.metrics import DaemonMetrics
from advisor.daemon.state_store import StateStore
from advisor.ports import AdviceSink, PoolSource
from plugins.policy import MachineInfo, Oracle, Policy, PolicyContext
from plugins.registry import policy_class

log = logging.getLogger("htcondor_advisor.daemon")


def make_policy(
    config: DaemonConfig, machines: Mapping[str, MachineInfo], oracle: Oracle | None = None
) -> Policy:
    """The configured policy; ``machines`` may be a live dict that grows as machines appear."""
    cls = policy_class(config.policy["name"])
    context = PolicyContext(machines=machines, seed=config.policy_seed)
    if cls.NEEDS_ORACLE:
        if oracle is None:
            raise ConfigError(
                f"policy.name: {cls.NAME!r} reads the future; only a simulated pool (kind: sim) "
                "can run it"
            )
        context.oracle = oracle
    return cls(context, config.policy["options"])


class Daemon:
    def __init__(
        self,
        config: DaemonConfig,
        policy: Policy,
        source: PoolSource,
        sinks: Sequence[AdviceSink],
        clock: Callable[[], float],
        machines: dict[str, MachineInfo] | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.metrics = DaemonMetrics(clock)
        self.board = AdviceBoard(policy.label)
        self.host = PolicyHost(
            policy,
            source,
            [self.board, *sinks],
            self.metrics,
            config.publish["advice_lifetime"],
            config.publish["dry_run"],
        )
        if machines is not None:
            self.host.machines = machines
        self.store = StateStore(config.state["directory"], config.state["keep"])
        self.server: AdviceServer | None = None
        self.reloads = 0

    # -- state -------------------------------------------------------------------------------
    def resume(self) -> dict[str, Any] | None:
        """Load the newest valid snapshot into the host; None when there is none."""
        loaded = self.store.load_newest()
        if loaded is None:
            log.info("no snapshot in %s: starting fresh", self.store.directory)
            return None
        try:
            self.host.restore(loaded.state)
        except ValueError as exc:
            raise ConfigError(f"{loaded.path}: {exc}") from None
        self.metrics.last_snapshot = loaded.saved_at
        log.info(
            "resumed from %s (saved at %.0f, %d events learned)",
            loaded.path.name,
            loaded.saved_at,
            self.host.events_seen,
        )
        return loaded.state

    def snapshot(self, now: float) -> Path:
        state = self.host.snapshot()
        state["advice"] = {m: as_json(p) for m, p in self.board.live(now).items()}
        path = self.store.save(state, now)
        self.metrics.last_snapshot = now
        log.debug("snapshot %s at %.0f", path.name, now)
        return path

    # -- endpoint ----------------------------------------------------------------------------
    def start_endpoint(self) -> str:
        host, port = self.config.publish["listen"]
        endpoint = Endpoint(
            self.board,
            self.metrics,
            self.clock,
            self.health,
            self.explain,
            self.config.metrics["enabled"],
        )
        self.server = AdviceServer(endpoint, host, port)
        self.server.start()
        return self.server.address

    def stop_endpoint(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def health(self) -> dict[str, Any]:
        now = self.clock()
        last = self.metrics.last_observation
        return {
            "status": "ok" if self.host.healthy else "pool unreachable",
            "now": now,
            "policy": self.host.policy.label,
            "pool": self.config.pool["kind"],
            "events": self.host.events_seen,
            "cycles": self.host.cycles,
            "seconds_since_observation": None if last is None else now - last,
            "advice_lifetime_s": self.host.lifetime_s,
            "dry_run": self.host.dry_run,
            "reloads": self.reloads,
        }

    def explain(self, machine: str) -> dict[str, Any]:
        now = self.clock()
        posted = self.board.get(machine, now)
        advice = None if posted is None else as_json(posted)
        return explain_machine(machine, self.host.snapshot(), advice, now)

    # -- reload ------------------------------------------------------------------------------
    def reload(
        self, path: Path, overrides: Mapping[str, Mapping[str, Any]], oracle: Oracle | None
    ) -> bool:
        """Re-read the configuration; learned state is kept. False (and logged) when invalid."""
        try:
            new = load_config(path, overrides)
            policy = None
            if new.policy != self.config.policy:
                policy = make_policy(new, self.host.machines, oracle)
        except (ConfigError, ValueError) as exc:
            log.error("reload of %s refused, keeping the running configuration: %s", path, exc)
            return False
        for section in ("pool", "state"):
            if getattr(new, section) != getattr(self.config, section):
                log.warning("%s: changes to the %s section need a restart", path, section)
        if new.publish["listen"] != self.config.publish["listen"]:
            log.warning("%s: a new publish.listen address needs a restart", path)
        with self.host.lock:
            if policy is not None:
                self.host.swap_policy(policy)
                self.board.policy_label = policy.label
            self.host.lifetime_s = new.publish["advice_lifetime"]
            self.host.dry_run = new.publish["dry_run"]
        if new.logging["level"] is not None:
            logging.getLogger().setLevel(new.logging["level"])
        self.config = new
        self.reloads += 1
        log.info("configuration reloaded from %s (reload %d)", path, self.reloads)
        return True
