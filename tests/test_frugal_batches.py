"""``frugal`` 7 ranks the other jobs of a batch one of whose jobs ran 23 hours (longer than any
completed job needed, no job of the batch completed) in the cut-short class, from their next
start: queued, or evicted (then kept off as a suspect); a completed job of the batch gives them
their own class back. Lower classes mark no batch."""

from __future__ import annotations

import json

from test_frugal_suspects import MACHINES, evict, jobs_advised, seen_completing
from tracekit import MONDAY, H

from plugins.contract.advice import JobAdvice
from plugins.contract.events import AttemptEnded, AttemptOutcome, JobQueued, JobRemoved
from plugins.contract.policy import PolicyContext
from plugins.frugal.policy import FrugalPolicy

AT = MONDAY + 2 * 24 * H
KEPT_OFF = 23 * H


def frugal(**options: str) -> FrugalPolicy:
    policy = FrugalPolicy(PolicyContext(MACHINES, seed=1), options)
    seen_completing(policy)  # batch 1: the longest completed job needed 5 hours
    return policy


def test_the_batch_of_a_job_that_ran_23_hours_is_ranked_in_that_class() -> None:
    policy = frugal()
    evict(policy, "2.0", 23.5, AT)  # ran 23 hours: batch 2 is marked
    evict(policy, "2.1", 0.5, AT + 60)  # its sibling, evicted soon: kept off and classed
    policy.observe(JobQueued(AT + 120, "2.7", "alice"))  # a new sibling: classed at once
    evict(policy, "3.0", 22.5, AT)  # 22 hours: a suspect, but its batch is not marked
    evict(policy, "3.1", 0.5, AT + 60)
    assert jobs_advised(policy, AT + 180) == {
        "2.0": JobAdvice(hold_until=AT + KEPT_OFF, needs_hours=23),
        "2.1": JobAdvice(hold_until=AT + 60 + KEPT_OFF, needs_hours=23),
        "2.7": JobAdvice(needs_hours=23),
        "3.0": JobAdvice(hold_until=AT + KEPT_OFF),
    }


def test_a_requeued_job_keeps_its_keep_off() -> None:
    """Live, the schedd reports an evicted job idle again (``JobQueued``) in the same cycle as
    its eviction or in a later one: its keep-off is not replaced by a class alone."""
    policy = frugal()
    evict(policy, "2.0", 23.5, AT)
    evict(policy, "2.1", 0.5, AT + 60)
    policy.observe(JobQueued(AT + 60, "2.1", "alice"))
    kept_off = JobAdvice(hold_until=AT + 60 + KEPT_OFF, needs_hours=23)
    assert jobs_advised(policy, AT + 120)["2.1"] == kept_off
    policy.observe(JobQueued(AT + 180, "2.1", "alice"))
    assert jobs_advised(policy, AT + 240) == {}


def test_a_completed_job_of_the_batch_gives_its_jobs_their_own_class_back() -> None:
    policy = frugal()
    evict(policy, "2.0", 23.5, AT)
    evict(policy, "2.1", 0.5, AT + 60)
    policy.observe(JobQueued(AT + 120, "2.7", "alice"))
    policy.observe(JobQueued(AT + 120, "2.8", "alice"))
    policy.observe(JobRemoved(AT + 130, "2.8"))  # gone: nothing to give back
    jobs_advised(policy, AT + 180)
    policy.observe(AttemptEnded(AT + 4 * H, "2.7", "pc", AttemptOutcome.COMPLETED, AT + 3 * H))
    assert jobs_advised(policy, AT + 5 * H) == {
        "2.0": JobAdvice(needs_hours=0),
        "2.1": JobAdvice(needs_hours=0),
    }
    evict(policy, "2.1", 0.5, AT + 6 * H)  # neither kept off nor classed any more
    policy.observe(JobQueued(AT + 6 * H, "2.9", "alice"))
    assert jobs_advised(policy, AT + 7 * H) == {}


def test_cut_short_batches_off_is_frugal_6() -> None:
    policy = frugal(cut_short_batches="off")
    evict(policy, "2.0", 23.5, AT)
    evict(policy, "2.1", 0.5, AT + 60)
    policy.observe(JobQueued(AT + 120, "2.7", "alice"))
    assert jobs_advised(policy, AT + 180) == {"2.0": JobAdvice(hold_until=AT + KEPT_OFF)}


def test_no_batch_is_marked_while_cut_short_is_off_or_a_completed_job_needed_23_hours() -> None:
    for policy in (frugal(cut_short="off"), frugal()):
        if policy.options["cut_short"] == "on":
            seen_completing(policy, 1, 23.2)  # class 23 is no longer cut short
        evict(policy, "2.0", 23.5, AT)
        evict(policy, "2.1", 0.5, AT + 60)
        assert jobs_advised(policy, AT + 180) == {"2.0": JobAdvice(hold_until=AT + KEPT_OFF)}


def test_marked_batches_survive_a_restart() -> None:
    policy = frugal()
    evict(policy, "2.0", 23.5, AT)
    policy.observe(JobQueued(AT + 120, "2.7", "alice"))
    jobs_advised(policy, AT + 180)
    restarted = FrugalPolicy(PolicyContext(MACHINES, seed=1))
    restarted.load_state(json.loads(json.dumps(policy.state_dict())))
    evict(restarted, "2.1", 0.5, AT + H)
    restarted.observe(AttemptEnded(AT + 4 * H, "2.3", "pc", AttemptOutcome.COMPLETED, AT + 3 * H))
    assert jobs_advised(restarted, AT + 5 * H) == {
        "2.1": JobAdvice(needs_hours=0),  # (its keep-off, sent in the same advice, is replaced)
        "2.0": JobAdvice(needs_hours=0),
        "2.7": JobAdvice(needs_hours=0),
    }
