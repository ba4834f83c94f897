"""Each attempt is charged its share of its machine's draw, as the replay charges it: jobs that
share a partitionable machine share its power, on real ``condor_status -long`` slot ads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from advisor.condor.core_shares import CoreShares
from advisor.condor.startd_ads import group_by_machine
from condor.fixtures import machine_ads
from plugins.contract.policy import MachineInfo

pytestmark = pytest.mark.realdata
T = 1_700_000_000.0
EIGHT = MachineInfo("ingwe.cs.wisc.edu", "lab", "big", 57.0, 40.0, 2.0, jobs_at_once=8)
ALONE = 40.0 + 17.0 / 8  # one core of eight busy: idle plus an eighth of the active extra


def eight_core_machine(shared_data: Path, busy: int) -> dict:
    """The real partitionable machine with ``busy`` one-core dynamic slots claimed."""
    ads = [dict(ad) for ad in machine_ads(shared_data, "StatusAds/partionable8core")]
    (pslot,) = [ad for ad in ads if ad.get("PartitionableSlot")]
    dynamic = next(ad for ad in ads if ad.get("DynamicSlot"))
    out = [{**pslot, "Cpus": 8 - busy, "State": "Unclaimed"}]
    for i in range(busy):
        out.append({**dynamic, "Name": f"slot1_{i + 1}@ingwe", "Cpus": 1, "State": "Claimed"})
    return group_by_machine(out)


def test_jobs_sharing_a_partitionable_machine_share_its_power(shared_data: Path) -> None:
    shares = CoreShares()
    shares.update(eight_core_machine(shared_data, 8), T)
    each = shares.mean_watts(EIGHT, T, T + 3600, 1)
    assert each == pytest.approx(57.0 / 8)  # eight jobs draw the machine's active power together
    shares.update(eight_core_machine(shared_data, 1), T + 3600)
    assert shares.mean_watts(EIGHT, T + 3600, T + 7200, 1) == pytest.approx(ALONE)
    # an attempt across both hours: the mean of the two, and two cores of it count twice
    assert shares.mean_watts(EIGHT, T, T + 7200, 2) == pytest.approx(
        (2 * 57.0 / 8 + (40.0 + 17.0 * 2 / 8)) / 2
    )


def test_a_machine_of_single_slots_charges_each_job_the_whole_machine(shared_data: Path) -> None:
    ads = [dict(ad) for ad in machine_ads(shared_data, "StatusAds/small1slot")]
    ads[0]["State"] = "Claimed"
    shares = CoreShares()
    shares.update(group_by_machine(ads), T)
    one = MachineInfo(ads[0]["Machine"], "lab", "n", 57.0, 40.0, 2.0, jobs_at_once=1)
    assert shares.mean_watts(one, T, T + 600, 4) == 57.0  # its cores are all the job's
    assert shares.mean_watts(None, T, T + 600, 1) == 0.0  # a machine of unknown power


def test_a_machine_reconfigured_to_more_cores_is_charged_by_its_cores_now(
    shared_data: Path,
) -> None:
    """The source described a machine once, when it first saw it: after a reconfig from 8 to
    16 cores each of 16 jobs was charged an eighth of its draw (twice its active power in all),
    and the host could not say the machine had changed until a restart."""
    from advisor.condor.factory import NORMAL_WATTS, machine_inventory
    from advisor.condor.retry import Backoff
    from advisor.condor.source import CondorPoolSource

    ads = [dict(ad) for ad in machine_ads(shared_data, "StatusAds/partionable8core")]
    pslot = next(ad for ad in ads if ad.get("PartitionableSlot"))
    current: list[Mapping[str, Any]] = [{**pslot, "KeyboardIdle": 100000}]
    source = CondorPoolSource(
        query_startds=lambda: current,
        schedds=[],
        inventory=machine_inventory(NORMAL_WATTS, {}),
        collector_backoff=Backoff("collector"),
    )
    host = pslot["Machine"]
    assert source.poll(T).machines[host].jobs_at_once == 8
    grown = {**current[0], "TotalSlotCpus": 16, "TotalCpus": 16.0, "Cpus": 0}
    dynamic = next(ad for ad in ads if ad.get("DynamicSlot"))
    jobs = [
        {**dynamic, "Name": f"slot1_{i}@{host}", "Cpus": 1, "State": "Claimed"} for i in range(16)
    ]
    current[:] = [grown, *jobs]
    info = source.poll(T + 600).machines[host]
    assert info.jobs_at_once == 16
    assert source.shares.mean_watts(info, T + 600, T + 4200, 1) == pytest.approx(
        info.active_watts / 16
    )
