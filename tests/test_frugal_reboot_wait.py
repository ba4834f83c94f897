"""``frugal`` 13 holds a new job until the nightly reboot has passed where all but
``user_quantile`` of its user's recent runtimes (else the pool's) are longer than the time left:
held, such a job surely finishes no later, and the draw of the hours until the reboot is
saved."""

from __future__ import annotations

from test_frugal_suspects import MACHINES, jobs_advised
from tracekit import MONDAY, H

from plugins.contract.events import AttemptEnded, AttemptOutcome, JobQueued
from plugins.contract.policy import PolicyContext
from plugins.frugal.policy import FrugalPolicy
from plugins.frugal.user_runtimes import MIN_SEEN

ONE_AM = MONDAY + 2 * 24 * H + H
"""Wednesday 01:00: two hours to the 03:00 reboot."""


def completed(policy: FrugalPolicy, user: str, hours: float, jobs: int = MIN_SEEN) -> None:
    """``jobs`` jobs of ``user`` ran ``hours`` each and completed on Tuesday evening."""
    end = ONE_AM - 6 * H
    for i in range(jobs):
        job = f"{user}.{i}"
        policy.observe(JobQueued(end - hours * H - 60, job, user))
        policy.observe(AttemptEnded(end, job, "pc", AttemptOutcome.COMPLETED, end - hours * H))


def frugal(reboot_hour: float | None = 3.0, **options: str) -> FrugalPolicy:
    """A pool whose bob ran 3-hour jobs and ann half-hour ones, twice as many."""
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1, reboot_hour=reboot_hour), options)
    completed(policy, "bob", 3.0)
    completed(policy, "ann", 0.5, jobs=2 * MIN_SEEN)
    jobs_advised(policy, ONE_AM - H)  # the hour's rows
    return policy


def held_until(policy: FrugalPolicy, user: str, at: float = ONE_AM) -> float | None:
    policy.observe(JobQueued(at, f"new-{user}.0", user))
    advice = jobs_advised(policy, at + 60).get(f"new-{user}.0")
    return None if advice is None else advice.hold_until


def test_a_new_job_the_reboot_would_likely_kill_waits_for_it_and_a_short_one_starts() -> None:
    assert held_until(frugal(), "bob") == ONE_AM + 2 * H  # 3 hours needed, 2 left: held
    assert held_until(frugal(), "ann") is None  # done in half an hour, before the reboot
    noon = ONE_AM + 11 * H  # 15 hours to the reboot: bob's job has time
    assert held_until(frugal(), "bob", at=noon) is None


def test_a_user_with_too_few_runtimes_is_judged_by_the_pools() -> None:
    assert held_until(frugal(), "carol") is None  # 1 in 3 of the pool's jobs needed over 2 h
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    completed(policy, "bob", 3.0)  # all of them did
    jobs_advised(policy, ONE_AM - H)
    assert held_until(policy, "carol") == ONE_AM + 2 * H


def test_sure_is_all_but_user_quantile_of_the_runtimes() -> None:
    for quantile, held in (("0.1", None), ("0.4", ONE_AM + 2 * H)):
        policy = frugal(user_quantile=quantile)
        completed(policy, "eve", 3.0, jobs=6)
        completed(policy, "eve", 0.5, jobs=4)  # (ids eve.0-3 again: queued anew, completed)
        assert held_until(policy, "eve") == held  # 6 in 10 need longer than the 2 hours left


def test_a_requeued_job_is_left_to_its_class_and_nothing_waits_without_a_reboot() -> None:
    policy = frugal()
    policy.observe(JobQueued(ONE_AM, "bob.9", "bob", prior_attempts=1))  # the reboot rule's
    assert "bob.9" not in jobs_advised(policy, ONE_AM + 60)
    assert held_until(frugal(reboot_hour=None), "bob") is None
    assert held_until(frugal(reboot_wait="off"), "bob") is None  # frugal 12


def test_the_hold_outlasts_the_hourly_change_of_the_jobs_class() -> None:
    """Advice without a hold lifts one (live: AdvisorHoldUntil 0), so the class a waiting new
    job is lowered to as the reboot nears (frugal 8) must carry its hold along."""
    policy = frugal()
    assert held_until(policy, "bob", at=ONE_AM - H / 2) == ONE_AM + 2 * H  # 00:30, class 2
    later = jobs_advised(policy, ONE_AM + 60)["new-bob.0"]  # 01:01: lowered again
    assert later.needs_hours is not None and later.needs_hours < 2
    assert later.hold_until == ONE_AM + 2 * H
