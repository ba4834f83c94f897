"""The shipped deploy/ expressions, evaluated by the real classad2 library on real machine ads,
choose the machine the simulator's matchmaking chooses on the same advice (a table)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import htcondor2  # noqa: F401  (HTCondor's old ClassAd semantics, as in every daemon: see below)
import pytest
from conftest import PROJECT_ROOT
from tracekit import Recorder, trace

from advisor.condor.attributes import advice_attributes
from advisor.condor.rank_places import in_places
from condor.fixtures import STATUS_ADS, machine_ads
from plugins.contract.advice import Advice, MachineAdvice, PowerAdvice
from plugins.contract.events import AttemptStarted
from plugins.contract.policy import PolicyContext, PoolView
from simulator.campus.replay import machine_infos, replay
from simulator.trace_model import (
    DEFAULT_MEMORY_MB,
    PARTITIONABLE,
    Cluster,
    Inventory,
    MachineSpec,
    OpeningHours,
)

pytestmark = pytest.mark.realdata
NOW = time.time()
"""time() in the expressions is the wall clock, so the advice is stamped with it."""
SITE_DEFAULTS = {
    "START": "TRUE",
    "NEGOTIATOR_PRE_JOB_RANK": "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED))"
    " - (100000 * Cpus) - Memory",
}
"""HTCondor 25's defaults for the knobs the fragments extend (condor_config_val -dump)."""
MACRO = re.compile(r"\$\((\w+)\)")
"""The expressions read unscoped names: a machine's own first, else the job's, as HTCondor's
daemons look them up. classad2 does so (``ExprTree.eval(machine, job)``) only under the old
ClassAd semantics, which importing htcondor2 turns on (as parsing an old-syntax ad does)."""


def deploy_macros(site: dict[str, str] | None = None) -> dict[str, str]:
    """``NAME = value`` of the shipped fragments, in file order, with HTCondor's rule that a
    self-reference is the earlier value (``$(NAME:default)``: the default when there is none);
    other macros are expanded when looked up. ``site``: values set in a file read before."""
    macros = {**SITE_DEFAULTS, **(site or {})}
    parts = ("common/40-htcondor-advisor-expressions.conf", "central-manager", "execute-point")
    for part in (*parts, "power/10-advisor-hibernate.config"):
        path = PROJECT_ROOT / "deploy" / part
        for conf in sorted(path.glob("*.conf")) if path.is_dir() else [path]:
            for line in conf.read_text().splitlines():
                name, sep, value = line.partition(" = ")
                if sep and re.fullmatch(r"[A-Z_.]+", name):
                    macros[name] = _own_value(name, value, macros.get(name))
    return macros


def _own_value(name: str, value: str, earlier: str | None) -> str:
    """``value`` with ``$(NAME)`` or ``$(NAME:default)`` of its own name replaced."""
    own = re.compile(rf"\$\({name}(?::([^)]*))?\)")
    return own.sub(lambda m: earlier or m.group(1) or "", value)


def expand(name: str, macros: dict[str, str]) -> str:
    text = macros[name]
    while MACRO.search(text):
        text = MACRO.sub(lambda m: macros[m.group(1)], text)
    return text


def candidate_ads(shared_data: Path, count: int) -> list[Any]:
    """Real startd ads, made free (the negotiator's candidates), plus generated variations."""
    ads = [ad for name in STATUS_ADS for ad in machine_ads(shared_data, name)]
    out = []
    for i in range(count):
        ad = ads[i % len(ads)].__class__(dict(ads[i % len(ads)]))
        ad["Name"] = f"slot1@m{i}.example.org"
        ad["Machine"] = f"m{i}.example.org"
        ad["State"] = "Unclaimed"
        ad["Memory"] = 1000 + 10 * i  # generated: distinct sizes make the site order strict
        ad["Cpus"] = 1
        ad["Rank"] = 0.0
        for key in ("RemoteOwner", "AdvisorRank"):
            if key in ad:
                del ad[key]
        out.append(ad)
    return out


def condor_choice(
    ads: list[Any], advice: dict[str, MachineAdvice], prior_hours: int, cpus: int = 1
) -> set[str]:
    """Machines the negotiator would give the job: its requirements (condor_submit's default
    resource clause) and START true, highest NEGOTIATOR_PRE_JOB_RANK as the negotiator compares
    it, rounded to a 32-bit float (``EvalNegotiatorMatchRank``, matchmaker.cpp), on the advice
    as the daemon publishes it (``in_places``)."""
    import classad2
    import numpy as np

    macros = deploy_macros()
    start = classad2.ExprTree(expand("START", macros))
    rank = classad2.ExprTree(expand("NEGOTIATOR_PRE_JOB_RANK", macros))
    fits = classad2.ExprTree("TARGET.Cpus >= RequestCpus && TARGET.Memory >= RequestMemory")
    job = classad2.ClassAd(
        {"ClusterId": 1, "ProcId": 0, "RequestMemory": DEFAULT_MEMORY_MB, "RequestCpus": cpus}
    )
    if prior_hours:
        job["LastRemoteWallClockTime"] = prior_hours * 3600 + 60
    scored = {}
    published = in_places(advice)
    for ad in ads:
        machine_ad = classad2.ClassAd(dict(ad))
        adv = published.get(ad["Machine"])
        if adv is not None:
            expires = adv.expires if adv.expires is not None else NOW + 600
            for key, value in advice_attributes(adv, NOW - 10, expires, "t/1").items():
                machine_ad[key] = value
        if fits.eval(job, machine_ad) is True and start.eval(machine_ad, job) is True:
            scored[ad["Machine"]] = np.float32(rank.eval(machine_ad, job))
    best = max(scored.values(), default=None)
    return {m for m, r in scored.items() if r == best}


class FixedAdvice(Recorder):
    """Gives the same advice every cycle (the table's row)."""

    def __init__(self, context: PolicyContext, table: dict[str, MachineAdvice]) -> None:
        super().__init__(context)
        self.table = table

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice(machines=dict(self.table))


def simulator_choice(
    names: list[str], advice: dict[str, MachineAdvice], pslots: Sequence[Any] = (), cpus: int = 1
) -> set[str]:
    """Where the simulator's negotiator starts one fresh job under ``advice``; with ``pslots``,
    on partitionable machines of those ads' cores and memory, for a job of ``cpus`` cores."""
    always = OpeningHours.always()
    machines = [MachineSpec(n, "c", "n", 1, 57, 40, 2) for n in names]
    if pslots:
        machines = [
            MachineSpec(ad["Machine"], "c", "n", ad["Cpus"], 57, 40, 2, ad["Memory"], PARTITIONABLE)
            for ad in pslots
        ]
    inv = Inventory({"c": Cluster("c", always)}, machines)
    tr = trace(inv, jobs=[(600.0, 3600.0, float("inf"))], days=0.5)
    tr.jobs.cpus[:] = cpus
    policy = FixedAdvice(PolicyContext(machine_infos(tr)), advice)
    replay(tr, policy)
    return {e.machine for e in policy.events if isinstance(e, AttemptStarted)}


A = MachineAdvice
TABLE = [
    ("highest rank wins", {"m0": A(1), "m1": A(7), "m2": A(3), "m3": A(0), "m4": A(2)}),
    ("held best is skipped", {"m0": A(1), "m1": A(7, hold=True), "m2": A(3), "m3": A(2)}),
    ("negative ranks keep jobs off", {"m0": A(-1), "m1": A(-5), "m2": A(0.5), "m3": A(-2)}),
    (
        "class 0 of rank-by-prior-hours",
        {
            "m0": A(9, rank_by_prior_hours=(0.1,) * 24),
            "m1": A(1, rank_by_prior_hours=(4.0,) * 24),
            "m2": A(2),
        },
    ),
    ("all held: no match", {f"m{i}": A(float(i), hold=True) for i in range(6)}),
    # ranks the negotiator's 32-bit float could not tell apart: idle periods ending a minute apart
    ("ranks a minute apart", {"m0": A(1.7e9), "m1": A(1.7e9 + 60), "m2": A(1.7e9 - 60)}),
]


@pytest.mark.parametrize(("case", "advice"), TABLE, ids=[row[0] for row in TABLE])
def test_shipped_expressions_match_the_simulator(
    shared_data: Path, case: str, advice: dict[str, MachineAdvice]
) -> None:
    ads = candidate_ads(shared_data, 6)
    full = {f"{m}.example.org": a for m, a in advice.items()}
    names = [ad["Machine"] for ad in ads]
    # machines without advice count as rank 0 on both sides
    assert condor_choice(ads, full, 0) == simulator_choice(names, full), case


PSLOT_CORES = [4, 2, 8, 2, 1, 4]
"""Free cores of six partitionable slots (memory grows with the index: m1 < m3 at two cores)."""
PSLOT_TABLE = [
    ("best fit without advice", {}, 2),
    ("advice before best fit", {"m2": A(3)}, 2),
    # the fewest cores among equal advice (the negotiator's float keeps Memory only to 2^-23 of
    # the rank: m1 and m3 differ by 20 MB, which places above 0 lose)
    ("best fit among equal advice", {"m0": A(90), "m1": A(90), "m5": A(90), "m2": A(89.5)}, 2),
    ("a slot too small is never chosen, whatever its rank", {"m4": A(9), "m0": A(1)}, 2),
    ("held best fit is skipped", {"m1": A(0, hold=True)}, 2),
    ("one core fits the smallest slot", {}, 1),
    ("a job no slot fits stays idle", {}, 16),
]


@pytest.mark.parametrize(("case", "advice", "cpus"), PSLOT_TABLE, ids=[r[0] for r in PSLOT_TABLE])
def test_shipped_expressions_match_the_simulator_on_partitionable_slots(
    shared_data: Path, case: str, advice: dict[str, MachineAdvice], cpus: int
) -> None:
    ads = candidate_ads(shared_data, len(PSLOT_CORES))
    for ad, cores in zip(ads, PSLOT_CORES, strict=True):
        ad["Cpus"], ad["PartitionableSlot"] = cores, True
    full = {f"{m}.example.org": a for m, a in advice.items()}
    names = [ad["Machine"] for ad in ads]
    chosen = condor_choice(ads, full, 0, cpus)
    assert chosen == simulator_choice(names, full, ads, cpus), case
    assert len(chosen) <= 1  # best fit makes the choice strict


@pytest.mark.parametrize("k", [1, 5, 23, 30])
def test_prior_hours_class_picks_its_rank(shared_data: Path, k: int) -> None:
    ads = candidate_ads(shared_data, 4)
    by_class = [tuple(float((i * 7 + c) % 11) for c in range(24)) for i in range(4)]
    advice = {ad["Machine"]: A(5.0, rank_by_prior_hours=by_class[i]) for i, ad in enumerate(ads)}
    expected = max(advice, key=lambda m: advice[m].rank_for(k))  # the simulator's rank
    assert condor_choice(ads, advice, k) == {expected}


@pytest.mark.parametrize("k", [0, 2, 3, 12])
def test_a_short_rank_list_is_read_alike_by_the_expressions_and_the_simulator(
    shared_data: Path, k: int
) -> None:
    # a site's policy may give fewer classes than 24: the class past the end takes the last rank
    ads = candidate_ads(shared_data, 3)
    ranks = [(9.0, 1.0, 1.0), (1.0, 2.0, 9.0), (5.0, 5.0, 5.0)]
    advice = {ad["Machine"]: A(7.0 - i, rank_by_prior_hours=ranks[i]) for i, ad in enumerate(ads)}
    expected = max(advice, key=lambda m: advice[m].rank_for(k))
    assert condor_choice(ads, advice, k) == {expected}


def test_expired_or_missing_advice_is_exactly_neutral(shared_data: Path) -> None:
    ads = candidate_ads(shared_data, 6)
    stale = {
        ad["Machine"]: A(float(i), hold=i % 2 == 0, expires=NOW - 1) for i, ad in enumerate(ads)
    }
    without = condor_choice(ads, {}, 0)
    assert condor_choice(ads, stale, 0) == without
    assert condor_choice(ads, stale, 3) == condor_choice(ads, {}, 3) == without


def test_a_sites_own_slot_constraint_is_kept() -> None:
    """Before, the central manager's fragment replaced it: a pool that kept, say, its GPU
    machines out of matchmaking got them matched again."""
    import classad2

    site = {"NEGOTIATOR_SLOT_CONSTRAINT": '(Arch == "X86_64")'}
    for macros, arm_ok in ((deploy_macros(site), False), (deploy_macros(), True)):
        constraint = classad2.ExprTree(expand("NEGOTIATOR_SLOT_CONSTRAINT", macros))
        assert constraint.eval(classad2.ClassAd({"Arch": "aarch64"})) is arm_ok
        assert constraint.eval(classad2.ClassAd({"Arch": "X86_64"})) is True


def test_job_rank_example_is_the_shipped_rank() -> None:
    """deploy/jobs/advisor-rank.sub writes out ADVISOR_RANK (a submit file cannot include it)."""
    text = (PROJECT_ROOT / "deploy/jobs/advisor-rank.sub").read_text()
    line = next(x for x in text.splitlines() if x.startswith("rank "))
    assert line.split("=", 1)[1].strip() == expand("ADVISOR_RANK", deploy_macros())


def hibernate(
    slots: list[Any], advice: MachineAdvice | None, site: str | None = None, dedicated: bool = False
) -> list[str]:
    """The shipped HIBERNATE of each slot of one machine, its advice merged into every slot's
    ad (the hook's attributes go to all slots, partitionable and dynamic); ``site``: the site's
    own rule, ADVISOR_SITE_HIBERNATE; ``dedicated``: ADVISOR_OBEY_MAY_SLEEP set true."""
    import classad2

    macros = deploy_macros()
    if site is not None:
        macros["ADVISOR_SITE_HIBERNATE"] = site
    if dedicated:
        macros["ADVISOR_OBEY_MAY_SLEEP"] = "true"
    expression = classad2.ExprTree(expand("HIBERNATE", macros))
    states = []
    for slot in slots:
        ad = classad2.ClassAd(dict(slot))
        if advice is not None:
            expires = advice.expires if advice.expires is not None else NOW + 600
            for key, value in advice_attributes(advice, NOW - 10, expires, "t/1").items():
                ad[key] = value
        states.append(expression.eval(ad))
    return states


def test_a_partitionable_machine_sleeps_on_reserve_off_only_once_no_dynamic_slot_is_left(
    shared_data: Path,
) -> None:
    # ingwe: its partitionable slot Unclaimed, four dynamic slots Claimed by jobs. The startd
    # hibernates only when every slot's HIBERNATE names the same state other than "NONE".
    slots = [dict(ad) for ad in machine_ads(shared_data, "StatusAds/partionable8core")]
    off = A(0.0, power=PowerAdvice.RESERVE_OFF)
    assert hibernate(slots, off) == ["RAM", "NONE", "NONE", "NONE", "NONE"]  # jobs keep it up
    assert hibernate(slots[:1], off) == ["RAM"]  # the last job gone: it may sleep
    assert hibernate(slots[:1], A(0.0)) == ["NONE"]  # "on": the site's rule, "NONE" here
    assert hibernate(slots[:1], None) == ["NONE"]  # no advice: the site's rule ("NONE")
    stale = A(0.0, power=PowerAdvice.RESERVE_OFF, expires=NOW - 1)
    assert hibernate(slots[:1], stale) == ["NONE"]  # expired advice: the site's rule


def test_a_sites_own_sleep_rule_holds_under_a_policy_that_gives_no_power_advice(
    shared_data: Path,
) -> None:
    # frugal and the bandits publish AdvisorPower = "on", the neutral power advice: a desktop
    # whose site rule says sleep must still sleep (it kept every desktop up before)
    slots = [dict(ad) for ad in machine_ads(shared_data, "StatusAds/partionable8core")]
    site = 'ifThenElse(State =?= "Unclaimed", "RAM", "NONE")'
    free, busy = slots[:1], slots
    assert hibernate(free, None, site) == ["RAM"]  # no advisor: the site's rule
    assert hibernate(free, A(0.0), site) == ["RAM"]  # "on": the site's rule still
    assert hibernate(free, A(0.0, power=PowerAdvice.MAY_SLEEP), site) == ["RAM"]
    assert hibernate(free, A(0.0, power=PowerAdvice.WAKE), site) == ["NONE"]  # kept up
    assert hibernate(busy, A(0.0), site) == ["RAM", "NONE", "NONE", "NONE", "NONE"]
    assert hibernate(free, A(0.0, power=PowerAdvice.RESERVE_OFF), "SHUTDOWN") == ["RAM"]


def test_a_dedicated_clusters_power_policy_switches_idle_nodes_off_with_may_sleep(
    shared_data: Path,
) -> None:
    # timeout and or-ppo switch idle nodes off with "may-sleep" (paper 001's switch-offs; the
    # dedicated replay obeys it at once): with the shipped default that left every node up,
    # since such a site's own rule is "NONE", and timeout did nothing live
    slots = [dict(ad) for ad in machine_ads(shared_data, "StatusAds/partionable8core")]
    free, busy = slots[:1], slots
    switched_off = A(0.0, power=PowerAdvice.MAY_SLEEP)
    assert hibernate(free, switched_off) == ["NONE"]  # a desktop pool: the site's rule
    assert hibernate(free, switched_off, dedicated=True) == ["RAM"]
    assert hibernate(busy, switched_off, dedicated=True) == ["RAM", "NONE", "NONE", "NONE", "NONE"]
    stale = A(0.0, power=PowerAdvice.MAY_SLEEP, expires=NOW - 1)
    assert hibernate(free, stale, dedicated=True) == ["NONE"]  # expired: the site's rule
    assert hibernate(free, A(0.0), dedicated=True) == ["NONE"]  # "on": up
