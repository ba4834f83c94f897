"""One running advisor assembled from its configuration: host, board, metrics, store, endpoint.

Both drivers use it: the live scheduler (``schedule.py``) and the digital twin (``twin.py``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.agent_files import with_agent
from advisor.daemon.access import Access, exposure_warnings, placeholder_warnings
from advisor.daemon.board import AdviceBoard, as_json
from advisor.daemon.config import DaemonConfig, load_config
from advisor.daemon.config_policy import check_pool_fit
from advisor.daemon.control_group import ControlGroup
from advisor.daemon.explain import UnknownMachine, explain_machine
from advisor.daemon.fields import ConfigError
from advisor.daemon.host import PolicyHost
from advisor.daemon.http_endpoint import Endpoint
from advisor.daemon.http_server import AdviceServer
from advisor.daemon.logs import iso
from advisor.daemon.metrics import DaemonMetrics
from advisor.daemon.restart_keys import restart_keys
from advisor.daemon.state_store import UNUSABLE, StateStore
from advisor.ports import AdviceSink, LabelledSink, PoolSource
from plugins.contract.policy import MachineInfo, Oracle, Policy, PolicyContext
from plugins.contract.registry import policy_class
from plugins.contract.yaml_text import one_line

log = logging.getLogger("htcondor_advisor.daemon")


def make_policy(
    config: DaemonConfig, machines: Mapping[str, MachineInfo], oracle: Oracle | None = None
) -> Policy:
    """The configured policy; ``machines`` may be a live dict that grows as machines appear."""
    cls = policy_class(config.policy["name"])
    context = PolicyContext(
        machines=machines, seed=config.policy_seed, reboot_hour=config.pool["reboot_hour"]
    )
    if cls.NEEDS_ORACLE:
        check_pool_fit(cls.NAME, config.pool["kind"])  # as check-config refuses it
        context.oracle = oracle
    return cls(context, with_agent(cls.NAME, config.policy["options"]))  # agent file read here


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
            config.publish["stale_after"],
        )
        if machines is not None:
            self.host.machines = machines
        if config.control["percent"] > 0:
            self.host.control = ControlGroup(config.control, self.metrics)
        self.store = StateStore(config.state["directory"], config.state["keep"])
        self.server: AdviceServer | None = None
        self.reloads = 0

    # -- state -------------------------------------------------------------------------------
    def resume(self) -> dict[str, Any] | None:
        """Load the newest snapshot that restores into the host; None when there is none.

        At start: temporary files a crash left are removed; snapshots that are corrupt, or that
        the policy or source cannot restore (a bad structure under a valid checksum), are moved
        to ``unusable/`` and the next older one is tried, the host reset to how it was built
        between tries. A snapshot of another policy or pool stops the start (ConfigError): it
        is valid, and the configuration, not the snapshot, may be what is wrong."""
        self.store.remove_orphans()
        fresh: dict[str, Any] = {}
        unusable = 0
        for loaded in self.store.candidates(set_aside=True):
            fresh = fresh or self._fresh_state()
            try:
                self.host.restore(loaded.state)
            except ValueError as exc:
                if not str(exc).startswith("snapshot is of"):
                    unusable += self._unrestorable(loaded.path, exc, fresh)
                    continue
                raise ConfigError(f"{loaded.path}: {exc}") from None
            except Exception as exc:  # KeyError, TypeError, ... from a state of the wrong shape
                unusable += self._unrestorable(loaded.path, exc, fresh)
                continue
            self.metrics.last_snapshot = loaded.saved_at
            log.info(
                "resumed from %s (saved at %s, %d events learned)",
                loaded.path.name,
                iso(loaded.saved_at),
                self.host.events_seen,
            )
            return loaded.state
        unusable += len(self.store.skipped)
        if unusable:
            log.warning(
                "no usable snapshot in %s (%d moved to %s/): starting fresh, learning starts over",
                self.store.directory,
                unusable,
                UNUSABLE,
            )
        else:
            log.info("no snapshot in %s: starting fresh", self.store.directory)
        return None

    def _fresh_state(self) -> dict[str, Any]:
        """What ``resume`` resets the host to after a failed restore (as JSON gives it back)."""
        host = self.host
        return {
            "machines": set(host.machines),
            "policy": json.loads(json.dumps(host.policy.state_dict())),
            "cursor": json.loads(json.dumps(host.source.cursor(), sort_keys=True)),
            "counters": (host.events_seen, host.cycles),
        }

    def _unrestorable(self, path: Path, exc: Exception, fresh: dict[str, Any]) -> int:
        """Set a snapshot that failed to restore aside and undo what it changed; 1."""
        reason = one_line(f"cannot be restored ({type(exc).__name__}: {exc})")
        log.warning("skipping snapshot %s: %s", path, reason)
        self.store.set_aside(path, reason)
        host = self.host
        try:
            with host.lock:
                for name in [m for m in host.machines if m not in fresh["machines"]]:
                    del host.machines[name]
                host.policy.load_state(json.loads(json.dumps(fresh["policy"])))
                cursor = json.loads(json.dumps(host.source.cursor(), sort_keys=True))
                if cursor != fresh["cursor"]:
                    host.source.restore(json.loads(json.dumps(fresh["cursor"])))
                host.events_seen, host.cycles = fresh["counters"]
        except Exception as undo:
            raise ConfigError(
                f"{path}: {reason}, and the policy could not be reset ({undo!r}); it was moved to "
                f"{UNUSABLE}/, start again"
            ) from None
        return 1

    def snapshot(self, now: float) -> Path | None:
        state = self.host.snapshot()
        state["advice"] = {m: as_json(p) for m, p in self.board.live(now).items()}
        state["policy"]["options"] = self.config.policy["options"]  # explain rebuilds the policy
        path = self.store.save_or_say(state, now)  # None: not written (logged), serving goes on
        if path is not None:
            self.metrics.last_snapshot = now
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
            Access.from_publish(self.config.publish),
        )
        self.server = AdviceServer(endpoint, host, port)
        self.server.start()
        publish = self.config.publish
        for warning in [*exposure_warnings(publish), *placeholder_warnings(publish)]:
            log.warning("%s", warning)
        return self.server.address

    def stop_endpoint(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def health(self) -> dict[str, Any]:
        now = self.clock()
        last = self.host.confirmed_at
        status = "ok" if self.host.health.healthy else "pool unreachable"
        if self.host.stale(now) and self.config.simulated:  # a twin cycles as it negotiates
            status = "waiting: the simulated pool negotiates again once a job is idle"
        elif self.host.stale(now):
            status = "stale: no confirmed view of the pool, advice not renewed"
        if self.host.failing is not None:  # a bug in the policy's code: its advice lapses
            status = f"policy failing: {self.host.failing}"
        return {
            "status": status,
            "now": now,
            "policy": self.host.policy.label,
            "pool": self.config.pool["kind"],
            "machines": len(self.host.machines),
            "events": self.host.events_seen,
            "cycles": self.host.cycles,
            "seconds_since_observation": None if last is None else now - last,
            "schedds_unanswered": list(self.host.health.silent_schedds),
            "advice_lifetime_s": self.host.lifetime_s,
            "stale_after_s": self.host.stale_after_s,
            "advice_renewed": not self.host.stale(now),
            "dry_run": self.host.dry_run,
            "reloads": self.reloads,
        }

    def explain(self, machine: str) -> dict[str, Any]:
        """Why ``machine`` has its advice; ``UnknownMachine`` when the pool never showed it."""
        now = self.clock()
        host = self.host
        with host.lock:
            if machine not in host.machines:
                raise UnknownMachine(machine, host.machines, "the daemon's view")
            said, state = host.policy.explain(machine), host.snapshot()
        posted = self.board.get(machine, now)
        advice = None if posted is None else as_json(posted)
        return explain_machine(machine, state, advice, now, said)

    # -- reload ------------------------------------------------------------------------------
    def reload(
        self, path: Path, overrides: Mapping[str, Mapping[str, Any]], oracle: Oracle | None
    ) -> bool:
        """Re-read the configuration; learned state is kept. False (and logged) when invalid."""
        try:
            new = load_config(path, overrides)
            later, policy = restart_keys(self.config, new), None
            if new.policy != self.config.policy and "policy.options" not in later:
                policy = make_policy(new, self.host.machines, oracle)
        except Exception as exc:  # whatever the file holds, the daemon keeps running
            why = (
                "; ".join(str(exc).splitlines())  # every error of the file, on the one log line
                if isinstance(exc, ConfigError)
                else f"{type(exc).__name__}: {exc}"
            )
            refused = "reload of %s refused, keeping the running configuration: %s"
            log.error(refused, path, one_line(why))
            log.debug("reload of %s failed", path, exc_info=not isinstance(exc, ConfigError))
            return False
        for key in later:
            log.warning("%s: a change of %s needs a restart", path, key)
        with self.host.lock:
            if policy is not None:
                try:
                    self.host.swap_policy(policy)  # the running policy stays if this fails
                except Exception as exc:
                    log.error(
                        "reload of %s refused, keeping the running configuration: policy %s "
                        "cannot take the learned state (%s)",
                        path,
                        policy.label,
                        one_line(f"{type(exc).__name__}: {exc}"),
                    )
                    return False
                self.board.policy_label = policy.label
                for sink in self.host.sinks:
                    if isinstance(sink, LabelledSink):
                        sink.policy = policy.label
            self.host.lifetime_s = new.publish["advice_lifetime"]
            self.host.dry_run = new.publish["dry_run"]
            self.host.stale_after_s = new.publish["stale_after"]
        if self.server is not None:  # the next request is judged by the new lists
            self.server.endpoint.access = Access.from_publish(new.publish)
        if new.logging["level"] is not None:
            logging.getLogger().setLevel(new.logging["level"])
        self.config = new
        self.reloads += 1
        log.info("configuration reloaded from %s (reload %d)", path, self.reloads)
        return True
