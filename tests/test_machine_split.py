"""The control arm's machines (plugins/contract/machine_split.py): an exact, stable share; the
policy asked about treated machines only; every machine told its arm, in the daemon and in a
replay; control jobs start only on control machines; the report resamples machines."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.daemon.arms import ArmBook
from advisor.daemon.effect import estimate
from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.control import CONTROL, TREATED, arm_of
from plugins.contract.events import AttemptEnded, AttemptOutcome, JobQueued
from plugins.contract.machine_split import CONTROL_MACHINE, TREATED_MACHINE, MachineSplit
from plugins.contract.policy import MachineView, PoolView

NAMES = [f"pc{i:04d}.campus" for i in range(1000)]


def test_the_share_is_exact_and_stable_as_machines_join() -> None:
    split = MachineSplit(10, NAMES[:138])
    assert len(split.control) == 14  # 10% of 138, rounded
    before = set(split.control)
    split.join(NAMES[138:139])
    moved = (split.control ^ before) - {NAMES[138]}
    assert len(moved) <= 1  # one machine more moves at most one machine known before across
    again = MachineSplit(10, reversed(NAMES[:139]))
    assert again.control == split.control  # the name alone decides, not the order
    assert len(MachineSplit(10, NAMES).control) == 100


def view(*machines: MachineView) -> PoolView:
    return PoolView(machines=list(machines), idle_jobs_by_prior_hours=[1] * 24)


def test_the_policy_sees_treated_machines_and_every_machine_is_told_its_arm() -> None:
    split = MachineSplit(10, NAMES[:100])
    control = sorted(split.control)
    treated = [n for n in NAMES[:100] if n not in split.control]
    asked = view(
        MachineView(control[0], "idle", 0.0),
        MachineView(control[1], "idle", 0.0, follows="room-a"),
        MachineView(treated[0], "idle", 0.0),  # the policy advises it
        MachineView(treated[1], "idle", 0.0),  # told nothing, follows nothing
        MachineView(treated[2], "idle", 0.0, follows="room-a"),  # goes on following
    )
    assert [mv.name for mv in split.ask(asked).machines] == treated[:3]
    answer = Advice(
        machines={treated[0]: MachineAdvice(rank=2.0), control[2]: MachineAdvice(rank=9.0)},
        follows={control[3]: "room-a"},
        shared={"room-a": MachineAdvice(rank=1.0)},
    )
    told = split.tell(answer, asked)
    assert told.machines == {
        treated[0]: MachineAdvice(rank=2.0, arm=TREATED),
        treated[1]: TREATED_MACHINE,
        control[0]: CONTROL_MACHINE,
        control[1]: CONTROL_MACHINE,
        control[2]: CONTROL_MACHINE,  # answered without being asked: still the control arm's
    }
    assert told.follows == {}
    assert told.shared == {"room-a": MachineAdvice(rank=1.0, arm=TREATED)}


def test_a_replay_starts_control_jobs_on_control_machines_only(tmp_path: Path) -> None:
    out = tmp_path / "out"
    scenario = ["--scenario", "campus", "--days", "7", "--scale", "0.1", "--seed", "3"]
    args = ["replay", *scenario, "--policy", "frugal", "--control-percent", "10", "--no-progress"]
    assert main([*args, "--out", str(out)]) == 0
    with (out / "jobs.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["machine"]]
    machines = sorted({r["machine"] for r in rows})
    split = MachineSplit(10, machines)  # (every machine ran a job: the same split)
    by_arm = {arm: {r["machine"] for r in rows if r["arm"] == arm} for arm in (CONTROL, TREATED)}
    assert by_arm[CONTROL] and by_arm[TREATED]
    assert by_arm[CONTROL] <= split.control
    assert not by_arm[TREATED] & split.control
    assert all(r["arm"] == arm_of(r["job_id"], 10) for r in rows)


def test_the_book_keeps_each_job_s_last_machine_and_the_report_resamples_machines() -> None:
    book = ArmBook(10, keep_s=1e9)
    ids = {arm: [f"{c}.0" for c in range(1, 400) if arm_of(f"{c}.0", 10) == arm] for arm in
           (CONTROL, TREATED)}  # fmt: skip
    for arm, jobs in ids.items():
        for i, job in enumerate(jobs[:30]):
            machine = f"{arm}-m{i % 3}"  # three machines per arm, one of them slow to serve
            wait = 3600.0 if machine.endswith("m0") else 60.0
            book.observe(JobQueued(0.0, job, "u"))
            book.observe(AttemptEnded(wait + 600, job, "x", AttemptOutcome.EVICTED_OWNER, wait, 50))
            book.observe(
                AttemptEnded(wait + 1200, job, machine, AttemptOutcome.COMPLETED, wait, 50)
            )
    assert {row[7] for row in book.ended} == {
        f"{a}-m{i}" for a in (CONTROL, TREATED) for i in range(3)
    }
    samples = [(arm, e, done, ovh, m, sub) for _, arm, done, ovh, e, _, _, m, sub in book.ended]
    overhead = estimate(samples)[1]
    assert overhead.ratio == pytest.approx(1.0)
    # three machines per arm: resampling them shows how much one slow machine weighs; resampling
    # the 30 jobs alone would give a far narrower interval
    per_job = [(a, e, done, ovh, f"{i}", s) for i, (a, e, done, ovh, _, s) in enumerate(samples)]
    narrow = estimate(per_job)[1]
    assert overhead.high - overhead.low > 2 * (narrow.high - narrow.low)
