"""``frugal``: ranks that follow owners' habits and machines' draw, holds only where waiting is
free (the reboot) or the job is almost surely a never-finisher, and a state that survives a
restart."""

from __future__ import annotations

import json

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


def ranks_at(policy: FrugalPolicy, now: float) -> dict[str, tuple[float, ...]]:
    view = PoolView([MachineView(m, "idle", now - H) for m in MACHINES], [1] + [0] * 23)
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
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
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
