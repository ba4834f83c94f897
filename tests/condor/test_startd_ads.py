"""Startd ads to owner sessions and power events: real ``condor_status -long`` ads, then edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.condor.factory import NORMAL_WATTS, machine_inventory
from advisor.condor.machine_tracker import MachineTracker
from advisor.condor.source import merged_slots
from advisor.condor.startd_ads import group_by_machine, slot_from_ad
from condor.fixtures import machine_ads
from plugins.contract.events import (
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)

pytestmark = pytest.mark.realdata


def _ads(shared_data: Path, name: str) -> list[dict]:
    return [dict(ad) for ad in machine_ads(shared_data, name)]


def test_slots_are_grouped_by_machine(shared_data: Path) -> None:
    grouped = group_by_machine(_ads(shared_data, "StatusAds/partionable8core"))
    assert list(grouped) == ["ingwe.cs.wisc.edu"]
    assert [s.name for s in grouped["ingwe.cs.wisc.edu"]][:2] == [
        "slot1@ingwe.cs.wisc.edu",
        "slot1_1@ingwe.cs.wisc.edu",
    ]


def test_keyboard_activity_opens_a_session_at_the_last_input(shared_data: Path) -> None:
    ads = _ads(shared_data, "StatusAds/basic4slot")
    busy = next(ad for ad in ads if ad["KeyboardIdle"] < 900)
    tracker = MachineTracker(active_idle_s=900)
    events = tracker.update(group_by_machine(ads), now=0.0)
    assert events == [
        OwnerSessionStarted(busy["MyCurrentTime"] - busy["KeyboardIdle"], "ingwe.cs.wisc.edu")
    ]
    assert tracker.views(group_by_machine(ads)) == []  # the owner is there: no candidate


def test_idle_keyboard_and_owner_state_transitions(shared_data: Path) -> None:
    ads = _ads(shared_data, "StatusAds/basic4slot")
    for ad in ads:
        ad["KeyboardIdle"] = 5000
    machine = "ingwe.cs.wisc.edu"
    tracker = MachineTracker(active_idle_s=900)
    assert tracker.update(group_by_machine(ads), now=0.0) == []
    (view,) = tracker.views(group_by_machine(ads))
    # free (one slot Unclaimed since 1417808224) but running jobs when read: idle from then on
    assert view.state == "idle" and view.free_since == 1417808269
    # the owner returns: slot1's job is preempted, then the slot is in Owner state
    ads[0].update(State="Preempting", EnteredCurrentState=1417808300, MyCurrentTime=1417808301)
    assert tracker.update(group_by_machine(ads), now=0.0) == []
    ads[0].update(State="Owner", EnteredCurrentState=1417808303, MyCurrentTime=1417808305)
    assert tracker.update(group_by_machine(ads), now=0.0) == [
        OwnerSessionStarted(1417808300, machine)
    ]
    ads[0].update(State="Unclaimed", EnteredCurrentState=1417808400, MyCurrentTime=1417808404)
    assert tracker.update(group_by_machine(ads), now=0.0) == [
        OwnerSessionEnded(1417808400, machine)
    ]


def test_offline_ads_carry_no_activity_and_mean_asleep(shared_data: Path) -> None:
    ads = _ads(shared_data, "StatusAds/small1slot")
    tracker = MachineTracker(active_idle_s=900)
    assert tracker.update(group_by_machine(ads), now=0.0) == [
        OwnerSessionStarted(1417808378 - 80, "ingwe.cs.wisc.edu")
    ]
    ads[0].update(Offline=True, KeyboardIdle=3, MyCurrentTime=1417809000)
    slot = slot_from_ad(ads[0])
    assert slot is not None and slot.keyboard_idle is None and slot.power is PowerState.SLEEP
    events = tracker.update(group_by_machine(ads), now=1417809001.0)
    assert [type(e) for e in events] == [OwnerSessionEnded, MachinePowerChanged]
    (view,) = tracker.views(group_by_machine(ads))
    assert view.state == "sleep"
    # the ad vanishes from the collector: the machine is off
    assert tracker.update({}, now=1417809500.0) == [
        MachinePowerChanged(1417809500.0, "ingwe.cs.wisc.edu", PowerState.OFF)
    ]


def test_a_sleeping_partitionable_machine_offers_its_cores_as_the_replay_counts_them(
    shared_data: Path,
) -> None:
    # a power policy wakes only the machines the waiting jobs need: one of eight cores takes
    # eight one-core jobs (plugins/power/base.py, ``_jobs_taken``), not one
    (pslot,) = [
        ad for ad in _ads(shared_data, "StatusAds/partionable8core") if ad.get("PartitionableSlot")
    ]
    pslot.update(Offline=True, Cpus=8, Memory=16000, State="Unclaimed")
    machines = group_by_machine([pslot])
    tracker = MachineTracker(active_idle_s=900)
    tracker.update(machines, now=float(pslot["MyCurrentTime"]))
    (view,) = tracker.views(machines)
    assert (view.state, view.free_cores, view.free_memory_mb) == ("sleep", 8, 16000)


@pytest.mark.parametrize("bogus", [-5, 10**12, "soon", None, True])
def test_bogus_idle_values_are_ignored(shared_data: Path, bogus: object) -> None:
    ad = _ads(shared_data, "StatusAds/small1slot")[0]
    ad["KeyboardIdle"] = bogus
    slot = slot_from_ad(ad)
    assert slot is not None and slot.keyboard_idle is None and slot.last_input is None


def test_tracker_state_survives_a_restart(shared_data: Path) -> None:
    ads = _ads(shared_data, "StatusAds/small1slot")
    first = MachineTracker(active_idle_s=900)
    first.update(group_by_machine(ads), now=0.0)
    second = MachineTracker(active_idle_s=900)
    second.load(first.state())
    ads[0]["KeyboardIdle"] = 5000
    ads[0]["EnteredCurrentState"] = 1417808369
    assert second.update(group_by_machine(ads), now=0.0) == [
        OwnerSessionEnded(1417808369 + 0.0, "ingwe.cs.wisc.edu")
    ]


def test_a_partitionable_slot_is_offered_with_what_its_dynamic_slots_left(
    shared_data: Path,
) -> None:
    # ingwe: 8 cores, four one-core dynamic slots Claimed, the partitionable slot Unclaimed with
    # 4 cores and 15428 MB left (HTCondor 25's default layout)
    ads = _ads(shared_data, "StatusAds/partionable8core")
    tracker = MachineTracker(active_idle_s=0)
    machines = group_by_machine(ads)
    tracker.update(machines, now=0.0)
    (view,) = tracker.views(machines)
    assert (view.name, view.state, view.free_cores, view.free_memory_mb) == (
        "ingwe.cs.wisc.edu",
        "idle",
        4,
        15428,
    )
    # carved to the last core, it is no candidate (it stays Unclaimed, with nothing left)
    full = [dict(ad, Cpus=0, Memory=0) if ad.get("PartitionableSlot") else ad for ad in ads]
    machines = group_by_machine(full)
    tracker.update(machines, now=0.0)
    assert tracker.views(machines) == []


LAYOUTS = [
    ("StatusAds/partionable8core", 8, 1),
    ("StatusAds/basic4slot", 4, 4),
    ("StatusAds/small1slot", 1, 1),
]
"""Real machines' ads: one-core jobs at once, and the slots the collector merge writes into."""


@pytest.mark.parametrize(("ads", "jobs", "merged"), LAYOUTS)
def test_a_machine_runs_as_many_jobs_as_its_partitionable_cores_or_static_slots(
    shared_data: Path, ads: str, jobs: int, merged: int
) -> None:
    """The capacity frugal's payback hold counts (docs/slots.md): the dynamic slots of the
    8-core machine are carved from its partitionable slot and add nothing."""
    ((machine, slots),) = group_by_machine(_ads(shared_data, ads)).items()
    info = machine_inventory(NORMAL_WATTS, {})(machine, slots)
    assert info.jobs_at_once == jobs


@pytest.mark.parametrize(("ads", "jobs", "merged"), LAYOUTS)
def test_the_merge_writes_into_the_slots_the_negotiator_matches_not_the_dynamic_ones(
    shared_data: Path, ads: str, jobs: int, merged: int
) -> None:
    # the 8-core machine's four dynamic slots are claimed, carved from its partitionable slot:
    # merging into them as well sent as many ads each cycle as the startds send
    (slots,) = group_by_machine(_ads(shared_data, ads)).values()
    names = merged_slots(slots)
    dynamic = [s.name for s in slots if s.jobs_at_once == 0]
    assert len(names) == merged and sorted(names + dynamic) == sorted(s.name for s in slots)


def test_a_machine_missing_from_a_collector_just_started_is_not_switched_off(
    shared_data: Path,
) -> None:
    # a restarted collector knows no startd until each sends its ad again
    machines = group_by_machine(_ads(shared_data, "StatusAds/small1slot"))
    tracker = MachineTracker(active_idle_s=0)
    tracker.update(machines, now=0.0)
    assert tracker.update({}, now=10.0, complete=False) == []
    assert tracker.update(machines, now=20.0) == []  # back, as it was: nothing happened
    (name,) = machines
    assert tracker.update({}, now=30.0) == [MachinePowerChanged(30.0, name, PowerState.OFF)]
    assert tracker.update({}, now=40.0) == []  # (still off: said once)
    # back: said, or the idle policies (and the bandits) count it taken by its owner for good
    (slot,) = machines[name]
    assert tracker.update(machines, now=50.0) == [
        MachinePowerChanged(slot.clock or 50.0, name, PowerState.ON)
    ]


def test_a_session_of_a_machine_whose_clock_runs_ahead_never_ends_before_it_began(
    shared_data: Path,
) -> None:
    """A session begins at the startd's time and, when the machine goes away, ends at the
    daemon's: a desktop whose clock ran ahead ended sessions before they began, which the idle
    history (sorted by logout) does not expect."""
    ads = _ads(shared_data, "StatusAds/basic4slot")
    busy = next(ad for ad in ads if ad["KeyboardIdle"] < 900)
    tracker = MachineTracker(active_idle_s=900)
    (began,) = tracker.update(group_by_machine(ads), now=0.0)
    assert isinstance(began, OwnerSessionStarted) and began.time > 600.0
    gone = tracker.update({}, now=600.0)  # by a clock far behind the startd's
    assert gone == [
        OwnerSessionEnded(began.time, busy["Machine"]),
        MachinePowerChanged(began.time, busy["Machine"], PowerState.OFF),
    ]


def test_a_machine_whose_startd_would_ignore_hibernate_is_said_not_to_sleep(
    shared_data: Path,
) -> None:
    """The real ads say ``IsWakeAble = false`` (no wake-on-LAN): HTCondor's startd then ignores
    HIBERNATE, so power advice must not count on its sleep, unless the site says it wakes it
    otherwise (``AdvisorWakeable = true``, with ``HIBERNATION_OVERRIDE_WOL``)."""
    ads = _ads(shared_data, "StatusAds/basic4slot")
    for ad in ads:
        ad["KeyboardIdle"] = 5000
    assert ads[0]["IsWakeAble"] is False and ads[0]["CanHibernate"] is True
    tracker = MachineTracker(active_idle_s=900)
    tracker.update(group_by_machine(ads), now=0.0)
    (view,) = tracker.views(group_by_machine(ads))
    assert view.can_sleep is False
    for ad in ads:
        ad["AdvisorWakeable"] = True
    (view,) = tracker.views(group_by_machine(ads))
    assert view.can_sleep is True
    for ad in ads:
        ad["CanHibernate"] = False  # no sleep state at all: nothing wakes it from one
    (view,) = tracker.views(group_by_machine(ads))
    assert view.can_sleep is False


def test_a_partitionable_machine_is_free_from_its_last_job_s_end_not_its_startd_s_start(
    shared_data: Path,
) -> None:
    """Its partitionable slot never leaves Unclaimed while its dynamic slots run jobs: its
    EnteredCurrentState may be days old, and a timeout policy let the machine sleep as soon as
    its last job ended (HIBERNATE acts on the standing "may-sleep" within a minute)."""
    ads = _ads(shared_data, "StatusAds/partionable8core")
    tracker = MachineTracker(active_idle_s=0)
    tracker.update(group_by_machine(ads), now=0.0)
    busy = [a for a in ads if a.get("SlotType") == "Dynamic"]
    clock = max(a["MyCurrentTime"] for a in ads)
    assert busy and tracker.views(group_by_machine(ads))[0].free_since == clock
    idle = [a for a in ads if a.get("SlotType") != "Dynamic"]
    for ad in idle:
        ad["MyCurrentTime"] = clock + 600
    tracker.update(group_by_machine(idle), now=0.0)
    (view,) = tracker.views(group_by_machine(idle))
    assert view.free_since == clock  # the last reading with a job on it, not when the
    assert min(a["EnteredCurrentState"] for a in idle) < clock  # slot entered Unclaimed
    for ad in idle:  # carved to its last MB: it takes no job, whatever cores it has left
        ad["Memory"] = 0
    assert tracker.views(group_by_machine(idle)) == []
