"""The control group in the replay (``PoolRules.control_percent``, ``--control-percent``): the jobs
the shipped expressions pick by their id are matched as without advice from their submission, in
their turn among the advised jobs; jobs.csv names each job's arm and summary.json has per-arm
figures; a pool without the option replays as before."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from tracekit import H, inventory, trace

from advisor.cli import main
from plugins.contract.advice import Advice, MachineAdvice
from plugins.contract.control import CONTROL, arm_of
from plugins.contract.events import AttemptEnded, Event
from plugins.contract.machine_split import MachineSplit
from plugins.contract.policy import Policy, PolicyContext, PoolView
from simulator.campus.job_book import DONE
from simulator.campus.replay import ReplayResult, machine_infos, replay
from simulator.campus.rules import PoolRules
from simulator.trace_model import PARTITIONABLE, OpeningHours, Trace

PERCENT = 30


class KeepOff(Policy):
    """Holds every machine: only jobs matched as without advice can start."""

    NAME = "keep-off"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(machines={m.name: MachineAdvice(hold=True) for m in view.machines})


class NoAdvice(Policy):
    NAME = "no-advice"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice()


class Learner(NoAdvice):
    """Records the jobs whose attempts it learned from."""

    NAME = "learner"
    WANTS = frozenset({AttemptEnded})

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.jobs: set[str] = set()

    def observe(self, event: Event) -> None:
        if isinstance(event, AttemptEnded):  # the only kind it WANTS
            self.jobs.add(event.job_id)


def test_the_policy_learns_from_the_treated_jobs_only() -> None:
    tr = trace(inventory(4), jobs=[(i * 60.0, H, float("inf")) for i in range(40)], days=2)
    for percent, learned_control in ((PERCENT, False), (None, True)):
        p = Learner(PolicyContext(machine_infos(tr), seed=1))
        book = replay(tr, p, seed=1, rules=PoolRules(control_percent=percent)).book
        ran = {book.ids[j] for j, s in enumerate(book.status) if s == DONE}
        control = {i for i in ran if arm_of(i, PERCENT) == CONTROL}
        assert control and p.jobs == (ran if learned_control else ran - control)


def run(tr: Trace, policy: type[Policy], percent: int | None) -> ReplayResult:
    p = policy(PolicyContext(machine_infos(tr), seed=1))
    return replay(tr, p, seed=1, rules=PoolRules(control_percent=percent))


def test_control_jobs_ignore_advice_that_keeps_the_others_off() -> None:
    tr = trace(inventory(2), jobs=[(i * 60.0, H, float("inf")) for i in range(40)], days=2)
    result = run(tr, KeepOff, PERCENT)
    book = result.book
    control = {j for j, i in enumerate(book.ids) if arm_of(i, PERCENT) == CONTROL}
    assert 5 <= len(control) <= 20 and book.unadvised.control == control
    done = {j for j, s in enumerate(book.status) if s == DONE}
    assert done == control  # every control job ran, no advised one did


def test_control_jobs_wait_their_turn() -> None:
    """One machine, no advice, all jobs at once: they start in job id order whatever their arm
    (a control job does not jump the queue, nor wait behind younger advised jobs)."""
    tr = trace(inventory(1), jobs=[(H, H, float("inf"))] * 12, days=2)
    result = run(tr, NoAdvice, PERCENT)
    book = result.book
    assert any(arm_of(i, PERCENT) == CONTROL for i in book.ids)
    finish = np.asarray(book.finish)
    assert np.all(np.diff(finish) > 0)


def test_replay_reports_each_arm(tmp_path: Path) -> None:
    common = ["--scenario", "campus", "--days", "7", "--scale", "0.05", "--no-progress"]
    out = tmp_path / "r"
    args = ["replay", *common, "--policy", "random", "--control-percent", "10", "--out", str(out)]
    assert main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    rows = list(csv.DictReader((out / "jobs.csv").open()))
    assert all(r["arm"] == arm_of(r["job_id"], 10) for r in rows)
    arms = summary["control"]
    assert arms["control"]["jobs"] + arms["treated"]["jobs"] == summary["jobs"]["submitted"]
    assert 0.05 < arms["control"]["jobs"] / summary["jobs"]["submitted"] < 0.15
    plain = tmp_path / "p"
    assert main(["replay", *common, "--policy", "random", "--out", str(plain)]) == 0
    assert "arm" not in (plain / "jobs.csv").read_text().splitlines()[0]
    assert "control" not in json.loads((plain / "summary.json").read_text())
    with pytest.raises(SystemExit) as bad:  # (0 is none, as control.percent: 0 is)
        main(["replay", *common, "--control-percent", "100", "--out", str(plain)])
    assert bad.value.code == 2


def test_a_control_job_only_a_treated_machine_fits_starts_once_its_wait_passes_the_bound() -> None:
    """As ``ADVISOR_ARM_OK`` reads the bound (deploy/common/40): a job that only the other arm's
    machines can run would wait for as long as the advice is fresh, so past the bound it is free
    of its arm; before it, each arm keeps to its own machines."""
    tr = trace(inventory(2, OpeningHours.always()), jobs=[(H, H, float("inf"))] * 8, days=2)
    names = [m.name for m in tr.inventory.machines]
    split = MachineSplit(50, names)
    tr.inventory.machines = [  # the control arm's machine is too small for the jobs
        replace(m, slots=PARTITIONABLE, cores=1 if split.is_control(m.name) else 4)
        for m in tr.inventory.machines
    ]
    tr.jobs.cpus[:] = 4
    control = {j for j, i in enumerate(tr.jobs.job_id) if arm_of(i, 50) == CONTROL}
    assert control and len(control) < 8
    for bound, ran in ((None, set()), (6 * H, control)):
        p = NoAdvice(PolicyContext(machine_infos(tr), seed=1))
        book = replay(tr, p, seed=1, rules=PoolRules(control_percent=50, wait_bound_s=bound)).book
        done = {j for j, s in enumerate(book.status) if s == DONE}
        assert done & control == ran
        started = np.asarray(book.finish) - np.asarray(book.runtime)
        assert all(started[j] - H >= 6 * H for j in ran)  # not before the bound
