"""On the real pool, the access point as shipped (deploy/access-point): a job's user cannot
change the attributes the advisor sets on it, a queue super user can, and the user still holds
and releases their job."""

from __future__ import annotations

import pytest

from integration.pool.pool import ChrootPool

pytestmark = pytest.mark.integration
IDLE = "executable = /bin/sleep\narguments = 600\nrequirements = false\nqueue 1\n"


def test_only_a_queue_super_user_changes_what_the_advisor_sets(idle_pool: ChrootPool) -> None:
    out = idle_pool.submit(IDLE)
    job = out.split("submitted to cluster ")[1].split(".")[0] + ".0"

    def qedit(value: str, user: str | None) -> bool:
        args = ("condor_qedit", job, "AdvisorHoldUntil", value)
        try:
            idle_pool.on_central_manager(*args, user=user)
        except RuntimeError as refused:
            assert 'Failed to set attribute "AdvisorHoldUntil"' in str(refused)
            return False
        return True

    def held_until() -> str:
        return idle_pool.run("condor_q", job, "-af", "AdvisorHoldUntil").strip()

    assert qedit("2000000000", None) and held_until() == "2000000000"  # root: a super user
    assert not qedit("0", "tester") and held_until() == "2000000000"
    idle_pool.on_central_manager("condor_hold", job, user="tester")
    idle_pool.on_central_manager("condor_release", job, user="tester")
    assert idle_pool.run("condor_q", job, "-af", "JobStatus").strip() == "1"
    idle_pool.run("condor_rm", job)
