"""A power policy in the campus replay: "reserve-off" puts idle machines to sleep and (with
``hold``) keeps jobs off them, "wake" wakes sleeping machines for waiting jobs, and "may-sleep"
leaves sleeping to the pool's own timers, as the deploy fragments do."""

from __future__ import annotations

from tracekit import H, inventory, trace

from plugins.contract.policy import PolicyContext
from plugins.power.base import PowerPolicy
from plugins.power.timeout import TimeoutPolicy
from plugins.power.view import ClusterView, PowerDecision
from simulator.campus.pool import IDLE, SLEEP, PoolRules
from simulator.campus.replay import World, build_world
from simulator.trace_model import DAY, OpeningHours, Trace

INF = float("inf")
ALWAYS = OpeningHours.always()


class ReserveEverything(PowerPolicy):
    """Keeps every machine reserved and off (a stand-in for an agent that reserves)."""

    NAME = "reserve-everything"

    def decide(self, view: ClusterView) -> PowerDecision:
        return PowerDecision(view.nodes, ())


def run(tr: Trace, policy: PowerPolicy) -> World:
    world = build_world(tr, policy, 0, PoolRules(), 60.0, None, None)
    world.engine.run(tr.end)
    world.pool.close()
    return world


def test_reserve_off_sleeps_idle_machines_and_hold_keeps_jobs_off() -> None:
    tr = trace(inventory(2, hours=ALWAYS), jobs=[(1 * H, 0.5 * H, INF)])
    world = run(tr, ReserveEverything(PolicyContext({})))
    assert world.power is not None and world.power.applied["reserve-off"] >= 2
    assert world.book.evictions == {"owner": 0, "reboot": 0}
    assert world.negotiator.matches == 0  # the held machines never got the job
    for m in range(2):  # asleep all day but the minute after the 03:00 reboot
        assert world.pool.seconds[m][SLEEP] >= DAY - 2 * 60
    neutral = run(tr, TimeoutPolicy(PolicyContext({}), {"t": 0.0}))
    assert neutral.negotiator.matches == 1


def test_wake_advice_wakes_a_sleeping_machine_for_a_waiting_job() -> None:
    # Asleep 60 idle minutes after the 03:00 reboot; the job arrives at 05:00:30.
    tr = trace(inventory(1, hours=ALWAYS), jobs=[(5 * H + 30, 0.5 * H, INF)])
    world = run(tr, TimeoutPolicy(PolicyContext({}), {"t": 0.0}))
    assert world.power is not None and world.power.applied["wake"] == 1
    assert world.negotiator.matches == 1


def test_may_sleep_leaves_sleeping_to_the_pool_timers() -> None:
    sessions = [(10 * H, 0, 11 * H), (14 * H, 0, 16 * H)]
    tr = trace(inventory(1), sessions=sessions)
    eager = run(tr, TimeoutPolicy(PolicyContext({}), {"t": 0.0}))
    patient = run(tr, TimeoutPolicy(PolicyContext({}), {"t": 30.0}))
    assert eager.pool.seconds == patient.pool.seconds
    assert eager.pool.seconds[0][SLEEP] > 0


def test_a_machine_woken_by_its_owner_stays_up_an_hour_before_reserve_off_sleeps_it() -> None:
    # HTCondor ignores HIBERNATE for an hour after a machine returns from a low power state: an
    # owner who wakes a reserved desktop for ten minutes leaves it up fifty more
    tr = trace(inventory(1, hours=ALWAYS), sessions=[(10 * H, 0, 10 * H + 600)])
    world = run(tr, ReserveEverything(PolicyContext({})))
    idle = world.pool.seconds[0][IDLE]  # the minute after the 03:00 reboot, then 10:10 to 11:00
    assert 50 * 60 <= idle <= 53 * 60, idle
