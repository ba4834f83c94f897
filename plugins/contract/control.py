"""The live control group: which jobs are matched without advice, decided by their job id alone.

The shipped ClassAd expressions (``ADVISOR_CONTROL`` in ``deploy/common/40``) compute this very
function from ``ClusterId`` and ``ProcId``, so no job is edited and the daemon, the simulator and
the negotiator agree on every job's arm. ClassAds have no hash builtin, so it is integer
arithmetic that cannot overflow 64 bits, modulo the prime 2^31 - 1: two steps of the Park-Miller
generator (multiplier 48271, 16 bits; products below 2^48) take in the cluster and the process,
then twice a square (below 2^62) and a step. Without the squares the buckets of consecutive
clusters would form a lattice (every ninth cluster alike, so one of nine users submitting in turn
would be all control); with them, buckets of clusters or processes taken in any stride up to 16
are as even as random ones. The result is scaled to a bucket 0..99; a job is in the control arm
when its bucket is below the control percent (docs/control-group.md).
"""

from __future__ import annotations

from plugins.contract.events import Event
from plugins.contract.job_ids import split_schedd

MODULUS = 2_147_483_647
"""2^31 - 1, the Park-Miller prime."""
MULTIPLIER = 48_271
"""The MINSTD multiplier of Park, Miller and Stockmeyer (1993)."""
CONTROL, TREATED = "control", "treated"
ARMS = (CONTROL, TREATED)


def control_bucket(cluster: int, proc: int) -> int:
    """The job's bucket, 0..99, as ``ADVISOR_CONTROL_BUCKET`` evaluates it."""
    x = MULTIPLIER * (cluster % MODULUS + 1) % MODULUS
    x = MULTIPLIER * (x + proc % MODULUS) % MODULUS
    x = MULTIPLIER * (x * x % MODULUS) % MODULUS
    x = MULTIPLIER * (x * x % MODULUS) % MODULUS
    return x * 100 // MODULUS


def job_numbers(job_id: str) -> tuple[int, int] | None:
    """``ClusterId.ProcId`` of an HTCondor job id (``"12.3"``, on a schedd ``"12.3@ap1"``, a
    bare ``"12"`` is process 0); None for ids of another form (a trace's own names, a replica
    ``12.3#r1``)."""
    cluster, _, proc = split_schedd(job_id)[0].partition(".")
    if not (cluster.isdigit() and (proc.isdigit() or not proc)):
        return None
    return int(cluster), int(proc or 0)


def arm_of(job_id: str, percent: float) -> str:
    """``control`` or ``treated``; a job without HTCondor numbers is always treated (the
    expressions cannot pick it)."""
    numbers = job_numbers(job_id)
    if numbers is None or percent <= 0:
        return TREATED
    return CONTROL if control_bucket(*numbers) < percent else TREATED


def of_control_job(event: Event, percent: float) -> bool:
    """Whether ``event`` concerns a control job. The policy learns from treated jobs only, so
    that the treated arm runs as the policy would on the whole pool: a bandit that also learned
    from the control jobs' random placements advised otherwise (docs/control-group.md)."""
    job = getattr(event, "job_id", None)
    return job is not None and arm_of(job, percent) == CONTROL
