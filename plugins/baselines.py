"""Baselines: ``random`` (HTCondor without advice) and ``crystal`` (the clairvoyant lower bound)."""

from __future__ import annotations

from plugins.contract.advice import Advice, JobAdvice, MachineAdvice
from plugins.contract.policy import Policy, PoolView


class RandomPolicy(Policy):
    """No advice at all: the negotiator's default order, effectively random (paper 000, sec. 7)."""

    NAME = "random"

    def advise(self, view: PoolView, now: float) -> Advice:
        return Advice()


class CrystalOraclePolicy(Policy):
    """Crystal (paper 004, sec. III): an oracle that knows each machine's future idle period and
    each job's execution time, so no attempt is ever lost; a lower bound, not a deployable policy.

    Through the advice: ``AdvisorPredictedIdle`` is the true remaining idle time, ``AdvisorRank``
    prefers machines with the lowest active power, and each job gets per-job advice: a requirement
    ``AdvisorPredictedIdle > runtime`` (longest fitting job first: Crystal favours long jobs) or a
    hold for a job that never finishes.
    """

    NAME = "crystal"
    NEEDS_ORACLE = True

    def advise(self, view: PoolView, now: float) -> Advice:
        oracle = self.context.oracle
        if oracle is None:
            raise RuntimeError("crystal is an oracle policy: it needs the future (replay only)")
        machines = self.context.machines
        advice = Advice()
        for mv in view.machines:
            advice.machines[mv.name] = MachineAdvice(
                rank=-machines[mv.name].active_watts,
                predicted_idle_s=oracle.free_until(mv.name, now) - now,
            )
        for job_id in view.new_jobs:
            runtime = oracle.job_runtime(job_id)
            advice.jobs[job_id] = (
                JobAdvice(hold=True)
                if runtime is None
                else JobAdvice(min_idle_s=runtime, prio=runtime)
            )
        return advice
