"""Why an attempt ended, from its epoch ad as a real HTCondor 25 pool wrote it for each case
(the chroot pool's ``jobEpochHistory``, the attributes ``EPOCH_PROJECTION`` asks for; the
integration test tests/integration/test_real_pool_epoch_outcomes.py makes them again)."""

from __future__ import annotations

import classad2
import pytest

from advisor.condor.epochs import EPOCH_PROJECTION, outcome_of
from plugins.contract.events import AttemptOutcome

COMMON = "JobStatus = 2\nNumJobStarts = 1\nEnteredCurrentStatus = 1796105369\n"
ADS = {
    "exit 0": ("ExitCode = 0\nExitBySignal = false\nNumJobCompletions = 1", "completed"),
    "exit 1, on_exit_remove = (ExitCode == 0)": (
        "ExitCode = 1\nExitBySignal = false\nOnExitRemove = (ExitCode == 0)\nNumJobCompletions = 1",
        "held",
    ),
    "exit 3, on_exit_hold = (ExitCode == 3)": (
        "HoldReasonCode = 3\nExitCode = 3\nExitBySignal = false\nOnExitHold = (ExitCode == 3)",
        "held",
    ),
    "the same exit, its second ad (the schedd writes two)": (
        "ExitCode = 3\nExitBySignal = false\nOnExitHold = (ExitCode == 3)",
        "held",
    ),
    "exit 2, max_retries = 1, first run": (
        "ExitCode = 2\nExitBySignal = false\nNumJobCompletions = 1\nJobMaxRetries = 1\n"
        "OnExitRemove = NumJobCompletions > JobMaxRetries || ExitCode is 0\nOnExitHold = false",
        "held",
    ),
    "exit 2, max_retries = 1, last run": (
        "ExitCode = 2\nExitBySignal = false\nNumJobCompletions = 2\nJobMaxRetries = 1\n"
        "OnExitRemove = NumJobCompletions > JobMaxRetries || ExitCode is 0\nOnExitHold = false",
        "completed",
    ),
    "condor_hold while running": ("VacateReasonCode = 1\nExitBySignal = true", "held"),
    "periodic_hold while running": (
        "VacateReasonCode = 1009\nHoldReasonCode = 3\nExitBySignal = true",
        "held",
    ),
    "condor_rm while running": ("VacateReasonCode = 1023\nExitBySignal = true", "removed"),
    "the owner returns (PREEMPT)": (
        "VacateReasonCode = 1011\nExitBySignal = true",
        "evicted-owner",
    ),
    "the startd shuts down": ("VacateReasonCode = 1013\nExitBySignal = true", "evicted-reboot"),
    "an exit rule that reads what was not asked for": (
        "ExitCode = 1\nOnExitRemove = ExitCode == 0 || SiteRetryLimit > 3",
        "completed",
    ),
}


@pytest.mark.parametrize(("text", "outcome"), ADS.values(), ids=list(ADS))
def test_the_job_s_own_exit_rules_and_holds_are_not_completions_nor_the_machine_s(
    text: str, outcome: str
) -> None:
    """Before, an exit its rule requeued or held counted as a completion (good energy, a runtime
    learned, a machine rewarded), and a hold as the machine going away."""
    whole = classad2.parseOne(COMMON + text + "\n", classad2.ParserType.Old)
    projected = classad2.ClassAd()
    for name in EPOCH_PROJECTION:
        if name in whole:
            projected[name] = whole.lookup(name)
    assert outcome_of(projected) is AttemptOutcome(outcome)
