"""Job ids that stay apart across several schedds.

Every schedd numbers its own clusters from 1, so a pool with two access points has a job
``12.0`` on each. The live daemon therefore names a schedd's job ``cluster.proc@schedd``
(``12.0@ap1.example.org``; the schedd's ``Name`` may itself hold an ``@``), and policies keep
them apart by the whole id. A trace's ids (``12.0``, a replica ``12.0#r1``, a name) have no
schedd; a batch is the cluster on its schedd.
"""

from __future__ import annotations


def on_schedd(job: str, schedd: str) -> str:
    """``cluster.proc`` of the schedd named ``schedd``, as the policies know it."""
    return f"{job}@{schedd}"


def split_schedd(job_id: str) -> tuple[str, str]:
    """(``cluster.proc``, schedd name), the name ``""`` for an id without one."""
    job, _, schedd = job_id.partition("@")
    return job, schedd


def batch_of(job_id: str) -> str:
    """The batch (cluster, on its schedd) of a job."""
    job, at, schedd = job_id.partition("@")
    return job.split(".", 1)[0] + at + schedd
