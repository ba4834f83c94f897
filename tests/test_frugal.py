"""``frugal``: ranks that follow owners' habits and machines' draw, holds only where waiting is
free (the reboot) or the job is almost surely a never-finisher, and a state that survives a
restart."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from tracekit import MONDAY, H

from plugins.contract.advice import PRIOR_HOURS_CLASSES
from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    JobRemoved,
    OwnerSessionEnded,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineInfo, MachineView, PolicyContext, PoolView
from plugins.frugal.arrivals import OwnerArrivals
from plugins.frugal.fates import JobFates, lower_bound
from plugins.frugal.futile import best_starts, completion_chances, futile_starts
from plugins.frugal.payback import kept_off, lost_hours
from plugins.frugal.policy import HELD, FrugalPolicy

DAY = 24 * H
MACHINES = {
    "busy-57": MachineInfo("busy-57", "busy", "Normal", 57.0, 40.0, 2.0),
    "quiet-57": MachineInfo("quiet-57", "quiet", "Normal", 57.0, 40.0, 2.0),
    "quiet-150": MachineInfo("quiet-150", "quiet", "Legacy", 150.0, 60.0, 4.0),
}


def owners_every_weekday_at_ten(policy: FrugalPolicy, weeks: int = 3) -> float:
    """Owners log in to ``busy-57`` at 10:00 and out at 11:00 on weekdays; returns the time."""
    for week in range(weeks):
        for day in range(5):
            t = MONDAY + (7 * week + day) * DAY
            policy.observe(OwnerSessionStarted(t + 10 * H, "busy-57"))
            policy.observe(OwnerSessionEnded(t + 11 * H, "busy-57"))
    return MONDAY + 7 * weeks * DAY


def ranks_at(
    policy: FrugalPolicy, now: float, machines: Mapping[str, MachineInfo] = MACHINES
) -> dict[str, tuple[float, ...]]:
    view = PoolView([MachineView(m, "idle", now - H) for m in machines], [1] + [0] * 23)
    advice = policy.advise(view, now)
    return {m: advice.shared[name].rank_by_prior_hours or () for m, name in advice.follows.items()}


def test_a_room_owners_arrive_in_is_ranked_below_a_quiet_one_of_the_same_draw() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    week = owners_every_weekday_at_ten(policy)
    before_ten = ranks_at(policy, week + 9 * H + 0.5 * H)  # Monday 09:30: a 2-hour job meets them
    assert before_ten["busy-57"][0] < before_ten["quiet-57"][0]
    evening = ranks_at(policy, week + 19 * H)  # nobody arrives in the evening: alike
    assert abs(evening["busy-57"][0] - evening["quiet-57"][0]) < 0.02 * evening["quiet-57"][0]


def test_a_machine_drawing_less_power_ranks_higher_where_owners_are_alike() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    ranks = ranks_at(policy, MONDAY + 19 * H)
    assert ranks["quiet-57"][0] > ranks["quiet-150"][0] > 0


def test_only_classes_the_reboot_would_surely_kill_are_held() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))  # (no owners: no futile start)
    ranks = ranks_at(policy, MONDAY + 23 * H)  # 23:00: the reboot at 03:00 is 4 hours away
    row = ranks["quiet-57"]
    assert all(r > 0 for r in row[:4])  # a job that ran under 4 hours may still finish
    assert all(r == HELD for r in row[4:])  # one that ran 4 hours or more cannot
    morning = ranks_at(policy, MONDAY + DAY + 4 * H)[("quiet-57")]  # 04:00: 23 hours ahead
    assert all(r > 0 for r in morning[:23]) and morning[23] == HELD


def test_the_never_finisher_share_of_a_class_comes_from_the_jobs_that_left_it() -> None:
    fates = JobFates()
    for i in range(100):  # 100 jobs evicted after 5 hours: 90 are removed, 10 complete later
        fates.evicted(f"j{i}", 5.2 * H)
        if i < 90:
            fates.removed(f"j{i}")
        else:
            fates.completed(f"j{i}", 8 * H)
    for i in range(300):  # and 300 short jobs that complete at once
        fates.completed(f"s{i}", 1 * H)
    bound = fates.never_finisher_bound()
    assert fates.left[0] == 400 and fates.left[5] == 100 and fates.left[6] == 0
    assert bound[5] == lower_bound(90, 100) and 0.8 < bound[5] < 0.9
    assert bound[0] < 0.25 and bound[6] == 0.0
    needed = fates.runtime_needed_h()
    assert 1.0 < needed[0] < 2.0 and 8.0 <= needed[5] <= 8.25


def test_a_class_of_sure_never_finishers_is_held_only_when_asked_and_once_seen_enough() -> None:
    def policy_seeing(removed: int, hold: float) -> FrugalPolicy:
        policy = FrugalPolicy(PolicyContext(MACHINES, seed=1), {"hold_never_finishers": hold})
        for i in range(removed):
            evicted = AttemptOutcome.EVICTED_OWNER
            policy.observe(AttemptEnded(MONDAY, f"j{i}", "quiet-57", evicted, MONDAY - 6.5 * H))
            policy.observe(JobRemoved(MONDAY + H, f"j{i}"))
        return policy

    noon = MONDAY + DAY + 4 * H  # 04:00: the reboot is far
    held = ranks_at(policy_seeing(200, 0.9), noon)["quiet-57"]
    assert all(r == HELD for r in held[1:7]) and held[0] > 0 and held[7] > 0
    assert all(r > 0 for r in ranks_at(policy_seeing(200, 0.0), noon)["quiet-57"][:23])
    assert all(r > 0 for r in ranks_at(policy_seeing(20, 0.9), noon)["quiet-57"][:23])


def test_what_it_learned_survives_a_restart_through_json() -> None:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    week = owners_every_weekday_at_ten(policy)
    policy.observe(AttemptEnded(week, "j", "quiet-57", AttemptOutcome.COMPLETED, week - 3 * H))
    state = json.loads(json.dumps(policy.state_dict()))
    restored = FrugalPolicy(PolicyContext({}, seed=1))  # a live daemon starts with no machines
    restored.load_state(state)
    restored.machines_joined(list(MACHINES.values()))
    now = week + 9.5 * H
    assert ranks_at(restored, now) == ranks_at(policy, now)
    assert len(ranks_at(policy, now)["busy-57"]) == PRIOR_HOURS_CLASSES


def test_owner_arrivals_are_counted_per_free_machine_hour() -> None:
    arrivals = OwnerArrivals()
    arrivals.join(["room"] * 4)
    arrivals.logout("room", MONDAY)  # watched from Monday 00:00, all four free
    arrivals.login("room", MONDAY + 0.5 * H)  # one taken: three free
    arrivals.logout("room", MONDAY + 1.5 * H)
    rates = arrivals.rates(MONDAY + 3 * H)
    hour = int((MONDAY // DAY + 3) % 7) * 24  # Monday 00:00's hour of the week
    assert arrivals.exposure[0, hour : hour + 3].tolist() == [3.5, 3.5, 4.0]
    assert rates[0, hour] > rates[0, hour + 2] > 0  # an hour without logins: the prior only


def test_the_eviction_chance_of_a_later_start_is_that_of_a_start_then() -> None:
    arrivals = OwnerArrivals()
    arrivals.join(["room", "other"])
    arrivals.logins[:] = np.random.default_rng(1).uniform(0, 5, arrivals.logins.shape)
    arrivals.exposure[:] = 10.0
    runtimes = np.array([0.5, 2.0, 13.25, 40.0])
    now = MONDAY + 5.5 * H
    ahead = copy.deepcopy(arrivals).eviction_chance_ahead(now, runtimes, 24)
    for d in (0, 1, 7, 23):  # (a copy each: asked later, it counts the free hours in between)
        then = copy.deepcopy(arrivals).eviction_chance(now + d * H, runtimes)
        assert ahead[d] == pytest.approx(then, rel=1e-12)
    assert (np.diff(ahead, axis=2) > 0).all()  # a longer run meets an owner likelier


def test_payback_keeps_a_long_class_off_a_busy_room_while_a_quiet_one_is_expected() -> None:
    rates = np.zeros((2, 80))
    rates[0] = 0.5  # room 0: an owner every two free hours; room 1: nobody
    held = kept_off(lost_hours(rates, np.array([1.0, 10.0]), to_reboot_h=20.0), np.ones(2))
    # 10 h in room 0 loses 1.92 h in expectation, more than an hour's wait for room 1
    assert held[0].tolist() == [False, True]
    assert not held[1].any()  # the quiet room is never worse than waiting


def test_payback_never_holds_where_every_hour_and_room_is_alike() -> None:
    rates = np.full((2, 80), 0.5)
    lost = lost_hours(rates, np.array([1.0, 10.0, 20.0]), to_reboot_h=20.0)
    assert not kept_off(lost, np.ones(2)).any()


def test_payback_expecting_any_machine_later_holds_less_than_expecting_the_safest() -> None:
    rates = np.zeros((2, 80))
    rates[1] = 0.5  # a quiet room of one machine, a busy one of nine
    lost = lost_hours(rates, np.array([10.0]), to_reboot_h=20.0)
    machines = np.array([1.0, 9.0])
    assert kept_off(lost, machines, 0.0)[:, 0].tolist() == [False, True]
    # later in a machine drawn from all: 1 + 0.9 * 1.92 h, more than 1.92 h now
    assert not kept_off(lost, machines, 1.0).any()
    assert kept_off(lost, machines, 0.1)[:, 0].tolist() == [False, True]


def test_payback_counts_the_reboot_and_what_an_attempt_loses() -> None:
    rates = np.zeros((1, 80))
    lost = lost_hours(rates, np.array([2.0, 10.0]), to_reboot_h=5.0)
    assert lost[0, 0].tolist() == pytest.approx([0.0, 5.0])  # 10 h cut at the reboot, 5 h in
    assert lost[0, 5].tolist() == pytest.approx([0.0, 0.0])  # just after the reboot: whole
    rates[0, 3] = 50.0  # an owner surely arrives in the fourth hour
    lost = lost_hours(rates, np.array([2.0, 10.0]), to_reboot_h=20.0)
    assert lost[0, 0, 0] == pytest.approx(0.0) and lost[0, 0, 1] == pytest.approx(3.02, abs=0.01)


def busy_and_quiet_at_monday_eight(
    options: dict[str, Any], machines: Mapping[str, MachineInfo]
) -> dict[str, tuple[float, ...]]:
    """Ranks at Monday 08:00 (reboot in 19 h) after owners took the ``busy`` room's free
    machines once every five hours at any hour, nobody came to the ``quiet`` one, and 60 jobs
    of 12 hours completed: 12 h in the busy room lose 3.46 h in expectation (and complete with
    chance exp(-12 / 5) = 0.09: the futile-start hold, frugal 5, is off unless asked)."""
    policy = FrugalPolicy(PolicyContext(machines, seed=1), {"futile_below": 0.0, **options})
    busy, quiet = (policy.arrivals.cluster_index[c] for c in ("busy", "quiet"))
    free_hours = 1000.0 * sum(m.cluster == "busy" for m in machines.values())
    policy.arrivals.logins[busy] = free_hours / 5
    policy.arrivals.exposure[busy] = free_hours
    policy.arrivals.exposure[quiet] = 1e6
    for job in range(60):
        done = AttemptOutcome.COMPLETED
        policy.observe(AttemptEnded(MONDAY + 12 * H, f"j{job}", "quiet-57", done, MONDAY))
    return ranks_at(policy, MONDAY + 21 * DAY + 8 * H, machines)


def test_payback_is_an_option_and_off_keeps_frugal_1() -> None:
    machines = {m: MACHINES[m] for m in ("busy-57", "quiet-57")}
    for payback in ("mean", "spread", "off"):
        ranks = busy_and_quiet_at_monday_eight({"payback": payback}, machines)
        assert ranks["quiet-57"][11] > 0
        # an hour's wait for the quiet room pays
        assert (ranks["busy-57"][11] == HELD) is (payback != "off")
        assert ranks["busy-57"][11] < ranks["quiet-57"][11]


def test_frugal_3_expects_a_held_job_in_the_safest_room_later_and_frugal_2_anywhere() -> None:
    machines = {
        f"busy-{i}": MachineInfo(f"busy-{i}", "busy", "Normal", 57.0, 40.0, 2.0) for i in range(9)
    }
    machines["quiet-57"] = MACHINES["quiet-57"]
    default = busy_and_quiet_at_monday_eight({}, machines)  # frugal 3
    anywhere = busy_and_quiet_at_monday_eight({"payback_later": 1.0}, machines)  # frugal 2's
    assert default["quiet-57"][11] > 0 and anywhere["quiet-57"][11] > 0
    # an hour's wait for the quiet room pays; a wait for a machine drawn as random placement
    # draws them (9 of 10 busy: 1 + 0.9 x 3.46 h) does not
    assert default["busy-0"][11] == HELD
    assert anywhere["busy-0"][11] != HELD


def test_a_class_spreads_over_the_runtimes_of_the_completed_jobs_that_ran_longer() -> None:
    fates = JobFates()
    for job, hours in enumerate([0.5, 1.5, 3.5, 3.5]):
        fates.completed(f"j{job}", hours * H)
    runtimes, shares = fates.runtime_spread()
    assert shares[0] @ runtimes == pytest.approx(fates.runtime_needed_h()[0])
    assert shares[1] @ runtimes == pytest.approx((1.625 + 2 * 3.625) / 3)
    assert shares[3] @ runtimes == 3.625
    assert shares[5] @ runtimes == 6.125  # none ran over 5 hours yet: k + 1


def test_a_start_that_almost_surely_is_cut_short_is_held_and_one_that_may_finish_is_not() -> None:
    runtimes = np.array([2.0, 12.0])
    shares = np.zeros((PRIOR_HOURS_CLASSES, 2))
    shares[:2, 0] = 1.0  # classes 0 and 1 need 2 hours, the others 12
    shares[2:, 1] = 1.0
    evicted = np.array([[[0.5, 1 - np.exp(-12 / 5)], [0.0, 0.0]]])  # a busy room and a quiet one
    chances = completion_chances(evicted, runtimes, shares, to_reboot_h=20.0)
    held = futile_starts(chances, below=0.2)
    assert held[0, 2:].all() and not held[0, :2].any()  # 12 h complete there with chance 0.09
    assert not held[1].any()
    assert not futile_starts(chances, below=0.05).any()
    # 12 hours cannot complete before a reboot 10 hours away, anywhere; a new job is never held
    late = futile_starts(completion_chances(evicted, runtimes, shares, 10.0), below=0.2)
    assert late[:, 2:].all() and not late[:, 0].any()


def test_a_start_is_best_when_no_later_start_within_the_day_is_likelier_to_complete() -> None:
    chances = np.zeros((3, 2, 2))  # starts now, in 1 and in 2 hours; two rooms; two classes
    chances[0, :, 1] = [0.07, 0.02]  # class 1 now: room 0 is its best start of the day
    chances[1:, :, 1] = 0.06
    chances[2, 1, 0] = 0.5  # class 0: a start in room 1 in two hours is likelier
    best = best_starts(chances)
    assert best[:, 1].tolist() == [True, False] and not best[:, 0].any()
    assert not best_starts(np.zeros((3, 2, 2))).any()  # what cannot complete stays held
    assert best_starts(chances[:1])[:, 1].all()  # nothing later compared (frugal 9)


def long_class_ranks(at_hour: float, options: dict[str, Any]) -> dict[str, tuple[float, ...]]:
    """Ranks at ``at_hour`` of a Monday (the reboot at 03:00) where owners take the free
    machines of the ``busy`` room once every 5 hours and of the ``quiet`` one every 10, at any
    hour, and 60 jobs of 20 hours completed: a 20-hour start completes with chance 0.018 in
    the busy room and 0.135 in the quiet one, below the futile-start threshold everywhere."""
    machines = {m: MACHINES[m] for m in ("busy-57", "quiet-57")}
    policy = FrugalPolicy(PolicyContext(machines, seed=1), options)
    for room, every_h in (("busy", 5), ("quiet", 10)):
        c = policy.arrivals.cluster_index[room]
        policy.arrivals.logins[c] = 1000.0 / every_h
        policy.arrivals.exposure[c] = 1000.0
    for job in range(60):
        done = AttemptOutcome.COMPLETED
        policy.observe(AttemptEnded(MONDAY + 20 * H, f"j{job}", "quiet-57", done, MONDAY))
    return ranks_at(policy, MONDAY + 21 * DAY + at_hour * H, machines)


def test_frugal_10_starts_a_class_no_hour_can_likely_finish_at_its_best_hour_and_room() -> None:
    after_reboot = long_class_ranks(3.5, {})
    assert after_reboot["quiet-57"][11] > 0  # its best start of the day: not held
    assert after_reboot["busy-57"][11] == HELD  # the quiet room is likelier, now and later
    # frugal 9 held it everywhere, all day, until the starvation bound released it
    assert long_class_ranks(3.5, {"futile_later": "off"})["quiet-57"][11] == HELD
    noon = long_class_ranks(12.0, {})  # 20 hours no longer fit before the reboot
    assert noon["quiet-57"][11] == HELD and noon["busy-57"][11] == HELD


def test_frugal_5_keeps_a_long_class_off_the_busy_room_even_without_payback() -> None:
    machines = {m: MACHINES[m] for m in ("busy-57", "quiet-57")}
    futile = busy_and_quiet_at_monday_eight({"payback": "off", "futile_below": 0.2}, machines)
    frugal_1 = busy_and_quiet_at_monday_eight({"payback": "off"}, machines)
    assert futile["busy-57"][11] == HELD and futile["quiet-57"][11] > 0
    assert frugal_1["busy-57"][11] != HELD
    assert futile["busy-57"][0] > 0  # a job that never ran starts anywhere
