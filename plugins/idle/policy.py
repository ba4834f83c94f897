"""The ML scheduler of paper 004 (Algorithm 1) on per-machine idle-time models, retrained monthly.

Algorithm 1 through the advice (docs/architecture.md section 3): every free or sleeping machine
publishes ``AdvisorPredictedIdle`` (the predicted idle time still ahead) and ``AdvisorRank`` = that
prediction, so a fresh job (p = 0) takes the machine with the longest predicted idle time, idle
machines before sleeping ones (the negotiator's order); a machine predicted to have no idle time
left is held (line 8: ``predictedIdle > p`` fails for every job). A job that ran before gets
``JobAdvice.min_idle_s`` = its longest earlier attempt, so it only starts where
``predictedIdle > p`` (lines 2-3, 8 and 12) and otherwise waits (line 15).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from plugins.contract.advice import Advice, JobAdvice, MachineAdvice
from plugins.contract.clock import next_reboot
from plugins.contract.events import (
    EVICTIONS,
    AttemptEnded,
    Event,
    JobRemoved,
    MachinePowerChanged,
    OwnerSessionEnded,
    OwnerSessionStarted,
    PowerState,
)
from plugins.contract.policy import MachineInfo, Policy, PolicyContext, PoolView
from plugins.idle.ensembles import combine, pick_model
from plugins.idle.features import features_now
from plugins.idle.history import MachineHistory
from plugins.idle.models import ModelPair
from plugins.idle.options import IDLE_OPTIONS
from plugins.idle.training import MIN_SAMPLES, IdleTrainer


class IdlePolicy(Policy):
    """Shared by every ensemble; subclasses only name their ``RULE``."""

    RULE: ClassVar[str] = "avg"
    VERSION = "1"
    OPTIONS = IDLE_OPTIONS
    TAKES_IDLE_MODELS = True
    WANTS = frozenset(
        {OwnerSessionStarted, OwnerSessionEnded, MachinePowerChanged, AttemptEnded, JobRemoved}
    )
    SNAPSHOT_LEAVES_OUT = frozenset({OwnerSessionStarted, OwnerSessionEnded, MachinePowerChanged})

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        self.histories = {name: MachineHistory() for name in context.machines}
        self.trainer = IdleTrainer(context, self.options, self.histories)
        self.delta = self.trainer.delta
        self.models: dict[str, ModelPair] = {}
        self.choice: dict[str, str] = {}
        self.longest: dict[str, float] = {}
        self.pending: set[str] = set()
        self._down: set[str] = set()

    def machines_joined(self, machines: Sequence[MachineInfo]) -> None:
        new = [m.name for m in machines if m.name not in self.histories]
        if new:
            self.histories.update((name, MachineHistory()) for name in new)
            self.trainer.index_machines()

    # -- learning ----------------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        if isinstance(event, OwnerSessionStarted):
            self.histories[event.machine].login(event.time)
        elif isinstance(event, OwnerSessionEnded):
            self.histories[event.machine].logout(event.time)
        elif isinstance(event, MachinePowerChanged):
            self._power(event)
        elif isinstance(event, AttemptEnded):
            self._attempt(event)
        elif isinstance(event, JobRemoved):  # (evicted, then removed while it waited)
            self.longest.pop(event.job_id, None)
            self.pending.discard(event.job_id)

    def _power(self, event: MachinePowerChanged) -> None:
        """Reboots split idle periods; a machine that is down is as taken as one with an owner."""
        history = self.histories[event.machine]
        if event.state is PowerState.REBOOTED:
            history.reboot(event.time)
        elif event.state is PowerState.OFF and event.machine not in self._down:
            self._down.add(event.machine)
            history.login(event.time)
        elif event.state is PowerState.ON and event.machine in self._down:
            self._down.discard(event.machine)
            history.logout(event.time)

    def _attempt(self, event: AttemptEnded) -> None:
        """maxPreviousRunDuration of Algorithm 1, kept for jobs still alive."""
        if event.outcome in EVICTIONS:
            ran = event.time - event.started
            self.longest[event.job_id] = max(self.longest.get(event.job_id, 0.0), ran)
            self.pending.add(event.job_id)
        else:
            self.longest.pop(event.job_id, None)
            self.pending.discard(event.job_id)

    def retrain(self, now: float) -> str:
        """Score last month's models, then fit new ones on everything before ``now``."""
        models = self.trainer.train(now, self.models)
        self.choice = {
            key: pick_model(self.RULE, self.trainer.scores.get(key, [])) for key in models
        }
        self.models = models  # one assignment: a daemon's advice thread sees old or new models
        return self.coverage()

    def coverage(self) -> str:
        """How many models, and how many machines have none (neutral advice until one has)."""
        group_of = self.trainer.layout.group_of
        without = sum(key not in self.models for key in group_of.values())
        count = f"{len(self.models)} model{'' if len(self.models) == 1 else 's'}"
        return (
            f"{count}; {without} of {len(group_of)} machines have none yet"
            f" (fewer than {MIN_SAMPLES} owner-free periods of their {self.options['group']}"
            " seen): their advice is neutral"
        )

    def install(self, models: Mapping[str, ModelPair], trained_until: float) -> None:
        """Use models loaded from a store instead of training now."""
        self.models = dict(models)
        self.trainer.trained_until = trained_until
        self.choice = {key: pick_model(self.RULE, []) for key in self.models}

    # -- advice ------------------------------------------------------------------------------
    def predict(self, machine: str, now: float, free_since: float) -> float | None:
        """Remaining idle seconds of ``machine`` at ``now`` by this ensemble (None: no model)."""
        layout = self.trainer.layout
        key = layout.group_of[machine]
        pair = self.models.get(key)
        if pair is None:
            return None
        row = features_now(
            self.histories[machine],
            now,
            free_since,
            layout.codes[machine],
            self.trainer.calendar,
            self.trainer.feature_names,
        )
        rf, mlp = pair.predict_one(row)
        idle = float(combine(self.choice.get(key, "avg"), np.asarray(rf), np.asarray(mlp)))
        return max(0.0, min(idle, next_reboot(now, self.context.reboot_hour) - now))

    def advise(self, view: PoolView, now: float) -> Advice:
        advice = Advice()
        if not self.models:
            return advice  # no history yet: neutral advice, HTCondor's own order
        for mv in view.machines:
            idle = self.predict(mv.name, now, mv.free_since)
            if idle is not None:
                advice.machines[mv.name] = self._machine_advice(idle, now)
        for job_id in self.pending:
            advice.jobs[job_id] = JobAdvice(min_idle_s=self.longest[job_id])
        self.pending.clear()
        return advice

    def _machine_advice(self, idle: float, now: float) -> MachineAdvice:
        """predictedIdle = lastLogout + idle - t (sec. V-E): the prediction is made once and
        counts down (``AdvisorPredictedIdle`` minus the time since ``AdvisorUpdated``) until it
        runs out or the 03:00 reboot starts a new period. The rank is the predicted end of the
        idle period, so ranks from different moments still order machines by idle time left."""
        if idle <= 0.0:  # line 8 fails even for p = 0: hold, and look again after delta
            return MachineAdvice(hold=True, predicted_idle_s=0.0, expires=now + self.delta)
        end = now + idle
        return MachineAdvice(
            rank=end,
            predicted_idle_s=idle,
            expires=min(end, next_reboot(now, self.context.reboot_hour)),
        )

    def state_dict(self) -> dict[str, Any]:
        """Scores and training log. The machines' histories are relearned from the daemon's
        journal (``SNAPSHOT_LEAVES_OUT``); the models are refitted on them or read from a store."""
        return {"trainer": self.trainer.state_dict(), "longest": dict(self.longest)}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.trainer.load_state(state["trainer"])
        self.longest = dict(state["longest"])
        self.pending = set(self.longest)


class IdleRFPolicy(IdlePolicy):
    """Algorithm 1 on the RandomForest prediction."""

    NAME, RULE = "idle-rf", "rf"


class IdleMLPPolicy(IdlePolicy):
    """Algorithm 1 on the MLP prediction."""

    NAME, RULE = "idle-mlp", "mlp"


class IdleMaxPolicy(IdlePolicy):
    """Algorithm 1 on max(RF, MLP): the speculative ensemble."""

    NAME, RULE = "idle-max", "max"


class IdleMinPolicy(IdlePolicy):
    """Algorithm 1 on min(RF, MLP): the conservative ensemble."""

    NAME, RULE = "idle-min", "min"


class IdleAvgPolicy(IdlePolicy):
    """Algorithm 1 on the mean of the RF and MLP predictions."""

    NAME, RULE = "idle-avg", "avg"


class IdleLastMonthPolicy(IdlePolicy):
    """Algorithm 1 on whichever model had the lower MSE last month."""

    NAME, RULE = "idle-last-month", "last-month"


class IdleBestAvgPolicy(IdlePolicy):
    """Algorithm 1 on whichever model had the lower MSE averaged over all past months."""

    NAME, RULE = "idle-best-avg", "best-avg"
