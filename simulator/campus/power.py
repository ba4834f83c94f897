"""A power policy in the campus replay: its advice applied as the shipped deploy expressions do.

Every minute (``HIBERNATE_CHECK_INTERVAL`` and ``ROOSTER_INTERVAL`` are 60 s) the power policy is
asked about every awake free and every sleeping machine, and its advice takes effect:

- "reserve-off" on an awake free (Unclaimed) machine: it goes to sleep now (HIBERNATE), unless
  it was woken within the hour, which the daemon keeps it up (``WOKEN_UP_S``);
- "wake" on a sleeping machine: it is woken and free again (condor_rooster);
- "may-sleep" and "on": the pool's own sleep timers decide, as under the execute point's fragment
  with its default ``ADVISOR_OBEY_MAY_SLEEP = false`` (a desktop pool's setting);
- ``hold``: the negotiator asks this object (``advise``), which returns the latest advice of
  this tick, so held (reserved) machines get no job, as with ``AdvisorHold`` in START.

The policy is asked once per tick about the whole pool, so a reservation counts every machine.
"""

from __future__ import annotations

from plugins.contract.advice import NEUTRAL_MACHINE_ADVICE, Advice, MachineAdvice, PowerAdvice
from plugins.contract.policy import MachineView, PoolView
from plugins.power.base import PowerPolicy
from simulator.campus.job_book import JobBook
from simulator.campus.pool import CampusPool
from simulator.engine import Engine

TICK_S = 60.0


class CampusPower:
    """Asks ``policy`` each minute and applies its power advice to ``pool``; counts what it did."""

    def __init__(self, engine: Engine, pool: CampusPool, book: JobBook, policy: PowerPolicy):
        self.engine, self.pool, self.book, self.policy = engine, pool, book, policy
        self.latest: dict[str, MachineAdvice] = {}
        self.applied = {"reserve-off": 0, "wake": 0, "held": 0}
        engine.at(engine.now(), self.tick)

    def tick(self, _: object = None) -> None:
        pool, now = self.pool, self.engine.now()
        names, since, cores = pool.names, pool.free_since, pool.free_cores
        machines = [
            MachineView(names[m], "idle", since[m], None, cores[m]) for m in pool.free_awake
        ]
        machines += [
            MachineView(names[m], "sleep", since[m], None, cores[m]) for m in pool.sleeping
        ]
        view = self.book.idle_jobs.pool_view(machines)
        self.latest = self.policy.advise(view, now).machines
        for name, advice in self.latest.items():
            self.applied["held"] += advice.hold
            if advice.power == PowerAdvice.RESERVE_OFF:
                m = pool.index[name]
                if m in pool.free_awake:
                    pool.sleep_now(m)
                    self.applied["reserve-off"] += m in pool.sleeping
            elif advice.power == PowerAdvice.WAKE:
                m = pool.index[name]
                if m in pool.sleeping:
                    pool.wake(m)
                    self.applied["wake"] += 1
        self.engine.at(now + TICK_S, self.tick)

    ASKS_ONLY_WHEN_FREED = False
    """The power advice of a free machine changes while it sleeps or wakes."""

    def advise(self, view: PoolView, now: float) -> Advice:
        """What the negotiator sees: the advice of the latest tick (the policy is not asked a
        second time, so a learning policy's history holds one observation per minute)."""
        latest = self.latest
        advice = Advice()
        for machine in view.machines:
            advice.machines[machine.name] = latest.get(machine.name, NEUTRAL_MACHINE_ADVICE)
        return advice
