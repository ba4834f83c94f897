"""Job attempts from ``Schedd.jobEpochHistory`` ads (one ad per attempt), and why each ended.

An epoch ad is written when an attempt ends, with JobStatus still 2 (HTCondor 25). Its
``VacateReasonCode`` (``CONDOR_HOLD_CODE``, condor_holdcodes.h) says why a job left a machine:
a code below 1000 is a hold (condor_hold's is 1), as is a ``HoldReasonCode`` (a periodic hold
vacates with 1009 and holds with 3); from 1000 it is a vacate: the startd's PREEMPT expression is
the owner's return; a startd that died, shut down, hibernated, or lost its shadow is the machine
going away (reboot or power-off); ``JobRemoved`` (1023) is the user's condor_rm. Any other vacate
(an administrator's command, draining, a better claim) also requeues the job and wastes the
attempt, and counts with the machine-side losses, never as owner evidence. Without a code the job
exited, and the shadow writes the ad before it applies the job's own rules: the attempt
completed unless ``OnExitHold`` held the job or ``OnExitRemove`` (``max_retries`` too) put it
back in the queue, which are the job's doing, reported as held (wasted, no machine's fault).
The real pool's ads of each case: tests/condor/test_epoch_outcomes.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

from advisor.condor.core_shares import Draw
from plugins.contract.events import AttemptEnded, AttemptOutcome, AttemptStarted

EPOCH_PROJECTION = (
    "ClusterId",
    "ProcId",
    "RunInstanceID",
    "RemoteHost",
    "LastRemoteHost",
    "JobCurrentStartDate",
    "JobStartDate",
    "EpochWriteDate",
    "EnteredCurrentStatus",
    "JobStatus",
    "VacateReasonCode",
    "ExitCode",
    "ExitBySignal",
    "GlobalJobId",
    # how the job's own rules took its exit (outcome_of), and what those rules commonly read
    *("HoldReasonCode", "OnExitHold", "OnExitRemove", "ExitSignal", "NumJobCompletions"),
    "JobMaxRetries",
    # read by QueueTracker.queued_unseen (a job that ran between two polls) and for its cores
    *("QDate", "JobMaterializeDate", "NumJobStarts", "Owner", "RequestCpus"),
    "AllowedExecuteDuration",
)
"""What is asked of each epoch ad: the schedd returns nothing else (Schedd.jobEpochHistory)."""
OWNER_CODES = frozenset({1011})  # StartdPreemptExpression
REMOVED_CODES = frozenset({1023})  # JobRemoved (condor_rm of a running job)
MACHINE_CODES = frozenset(
    {1008, 1012, 1013, 1016}
)  # ReconnectFailed, Exception, Shutdown, Hibernate
REMOVED, COMPLETED, HELD = 3, 4, 5


def job_id(ad: Mapping[str, Any]) -> str | None:
    cluster, proc = ad.get("ClusterId"), ad.get("ProcId")
    if not isinstance(cluster, int) or not isinstance(proc, int):
        return None
    return f"{cluster}.{proc}"


def machine_of(remote_host: Any) -> str | None:
    """``slot1_2@host.example.org`` -> ``host.example.org`` (the startd's ``Machine``)."""
    if not isinstance(remote_host, str) or not remote_host:
        return None
    return remote_host.rpartition("@")[2]


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def exit_rule(ad: Mapping[str, Any], name: str) -> bool | None:
    """The job's ``OnExitHold`` or ``OnExitRemove`` evaluated in its ad; None where it is not
    a boolean there (an attribute it reads was not asked for: the exit then counts as before)."""
    value = ad.get(name)
    evaluate = getattr(ad, "eval", None)
    if value is not None and not isinstance(value, bool) and evaluate is not None:
        value = evaluate(name)
    return value if isinstance(value, bool) else None


def outcome_of(ad: Mapping[str, Any]) -> AttemptOutcome:
    """Why the attempt ended (the module's docstring)."""
    code = ad.get("VacateReasonCode")
    status = ad.get("JobStatus")
    if status == REMOVED or code in REMOVED_CODES:
        return AttemptOutcome.REMOVED
    held = status == HELD or _whole(ad.get("HoldReasonCode")) or (_whole(code) and code < 1000)
    if held or exit_rule(ad, "OnExitHold") is True:
        return AttemptOutcome.HELD
    if _whole(code):
        if code in OWNER_CODES:
            return AttemptOutcome.EVICTED_OWNER
        return AttemptOutcome.EVICTED_REBOOT
    if exit_rule(ad, "OnExitRemove") is False:
        return AttemptOutcome.HELD
    return AttemptOutcome.COMPLETED


def unix_time(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value) if value > 0 else None


def schedd_of(ad: Mapping[str, Any]) -> str | None:
    """The schedd ``GlobalJobId`` (``schedd#cluster.proc#qdate``) names, if any."""
    global_id = ad.get("GlobalJobId")
    if isinstance(global_id, str) and "#" in global_id:
        return global_id.split("#", 1)[0]
    return None


def epoch_key(ad: Mapping[str, Any]) -> tuple[float, str] | None:
    """Order and identity of an epoch ad: (write time, [schedd#]job.run-instance). Two schedds
    on one host share an epoch history, where ``1.0`` of each is told apart by its schedd."""
    jid, written = job_id(ad), unix_time(ad.get("EpochWriteDate"))
    if jid is None or written is None:
        return None
    schedd = schedd_of(ad)
    ident = f"{jid}.{ad.get('RunInstanceID', 0)}"
    return written, f"{schedd}#{ident}" if schedd else ident


def attempt_events(ad: Mapping[str, Any], draw: Draw) -> list[AttemptStarted | AttemptEnded]:
    """AttemptStarted and AttemptEnded for one finished attempt ([] when the ad is incomplete);
    ``draw`` gives the attempt's share of its machine's power (core_shares.py)."""
    jid = job_id(ad)
    machine = machine_of(ad.get("RemoteHost")) or machine_of(ad.get("LastRemoteHost"))
    started = unix_time(ad.get("JobCurrentStartDate")) or unix_time(ad.get("JobStartDate"))
    ended = unix_time(ad.get("EpochWriteDate")) or unix_time(ad.get("EnteredCurrentStatus"))
    if jid is None or machine is None or started is None or ended is None:
        return []
    ended = max(ended, started)
    cpus = ad.get("RequestCpus")
    cores = cpus if isinstance(cpus, int) and not isinstance(cpus, bool) and cpus > 0 else 1
    watts = draw(machine, started, ended, cores)
    return [
        AttemptStarted(started, jid, machine),
        AttemptEnded(ended, jid, machine, outcome_of(ad), started, watts),
    ]
