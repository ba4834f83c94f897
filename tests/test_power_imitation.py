"""The warm start's labels: OR*'s hold/release choices as action levels, on its own states and
on the states a student reaches (DAgger)."""

from __future__ import annotations

import numpy as np
from dedicatedkit import workload

from plugins.power.features import HISTORY, OBSERVATION_SIZE
from plugins.power.ppo import init_params
from simulator.dedicated.rollout import teacher_day


def busy_day():
    rng = np.random.default_rng(3)
    arrivals = np.sort(rng.uniform(0, 80000, 40))
    jobs = [
        (float(a), int(rng.integers(1, 5)), 3600.0, float(rng.uniform(60, 3000))) for a in arrivals
    ]
    return workload(8, 1, jobs)


def test_graded_labels_release_no_less_than_needed_and_hold_alike() -> None:
    jobs = busy_day()
    obs, binary = teacher_day(jobs, 8)
    _, graded = teacher_day(jobs, 8, graded=True)
    assert obs.shape == (1440, HISTORY * OBSERVATION_SIZE)
    assert set(np.unique(binary)) == {0, 8}  # OR* both holds and releases on this day
    assert np.array_equal(graded == 8, binary == 8)  # same states, same holds
    assert graded.min() >= 0 and graded[graded < 8].max() < 8


def test_dagger_labels_the_states_the_student_reaches() -> None:
    jobs = busy_day()
    student = init_params(HISTORY * OBSERVATION_SIZE, 8, 9, np.random.default_rng(0), favour=(8,))
    own_obs, _ = teacher_day(jobs, 8)
    student_obs, labels = teacher_day(jobs, 8, student)
    assert len(labels) == 1440 and set(np.unique(labels)) <= {0, 8}
    assert not np.array_equal(own_obs, student_obs)  # a holding student visits other states
