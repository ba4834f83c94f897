"""The event contract (docs/architecture.md section 3): events are frozen, hashable, picklable
values with readable reprs."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from plugins.contract.events import (
    AttemptEnded,
    AttemptOutcome,
    JobQueued,
    OwnerSessionStarted,
)


def test_events_stay_frozen_values() -> None:
    job = JobQueued(5.0, "1.0", "alice", replicable=True)
    assert job == JobQueued(5.0, "1.0", "alice", 0, 0.0, "", None, True)
    assert hash(job) == hash(JobQueued(5.0, "1.0", "alice", replicable=True))
    assert (job.prior_attempts, job.group, job.expected_runtime_s) == (0, "", None)
    assert repr(OwnerSessionStarted(1.0, "pc1")) == "OwnerSessionStarted(time=1.0, machine='pc1')"
    ended = AttemptEnded(9.0, "1.0", "pc1", AttemptOutcome.COMPLETED, 2.0)
    assert ended.active_watts == 0.0 and ended != dataclasses.replace(ended, active_watts=50.0)
    assert pickle.loads(pickle.dumps(ended)) == ended
    with pytest.raises(dataclasses.FrozenInstanceError):
        ended.time = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        OwnerSessionStarted(1.0)  # type: ignore[call-arg]
