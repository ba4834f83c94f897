"""The event contract (DESIGN section 3) survives the faster ``__init__`` that events, machine
views and machine advice are given."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from plugins.contract.advice import MachineAdvice
from plugins.contract.events import (
    ALL_EVENT_KINDS,
    AttemptEnded,
    AttemptOutcome,
    JobQueued,
    OwnerSessionStarted,
)
from plugins.contract.policy import MachineView


def test_every_event_kind_builds_like_its_dataclass() -> None:
    for kind in (*ALL_EVENT_KINDS, MachineView, MachineAdvice):
        params = list(inspect.signature(kind).parameters.values())
        fields = dataclasses.fields(kind)
        assert [p.name for p in params] == [f.name for f in fields]
        for p, f in zip(params, fields, strict=True):
            assert p.default == (
                inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
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
