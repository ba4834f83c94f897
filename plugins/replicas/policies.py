"""``replicas-fixed`` and ``replicas-bandit`` (paper 003 sec. 4.2-4.3) as per-job advice.

The count reaches the pool as ``JobAdvice.replicas`` for each new replicable job; the pool runs the
replicas, keeps the first to finish and kills the rest. The bandit learns from the events: the
job's turnaround against its QoS bound, and the wasted energy or the contenders of its replicas.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from plugins.bandits.agent import BanditAgent, from_json_key, json_key
from plugins.bandits.history import parse_history
from plugins.contract.advice import Advice, JobAdvice
from plugins.contract.clock import hour_of_day, hour_of_week
from plugins.contract.events import (
    ALL_EVENT_KINDS,
    AttemptEnded,
    AttemptOutcome,
    AttemptStarted,
    Event,
    JobQueued,
    JobRemoved,
)
from plugins.contract.policy import MachineInfo, Option, Policy, PolicyContext, PoolView
from plugins.replicas.qos import (
    HOUR,
    contender_penalty,
    parse_qos,
    replica_reward,
    wasted_penalty,
)

STATE_SPACES = ("SINGLE", "DAY", "WEEK", "LOAD", "DAY_LOAD", "DAY_LENGTH")
MAX_REPLICAS = 10


def _count(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MAX_REPLICAS:
        raise ValueError(f"must be 1..{MAX_REPLICAS}")
    return value


def _choice(allowed: tuple[str, ...]):
    def parse(text: str) -> str:
        value = text.strip().upper() if allowed == STATE_SPACES else text.strip().lower()
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return value

    return parse


def family_of(job_id: str) -> str:
    """A replica ``<job>#r<i>`` belongs to ``<job>``."""
    return job_id.partition("#r")[0]


class FixedReplicas(Policy):
    """Every replicable job runs as ``replicas`` copies (paper 003 sec. 4.3; 1 = no replication)."""

    NAME = "replicas-fixed"
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "replicas": Option(2, _count, f"copies of each replicable job (1..{MAX_REPLICAS})")
    }

    def advise(self, view: PoolView, now: float) -> Advice:
        n = self.options["replicas"]
        return (
            Advice(jobs={job: JobAdvice(replicas=n) for job in view.new_jobs})
            if n > 1
            else Advice()
        )


@dataclass
class Family:
    """One replicable job while it is judged."""

    submit: float
    state: Hashable
    user: str
    replicas: int = 0
    exec_s: float = 0.0
    finished: float | None = None
    wasted_wh: float = 0.0
    contenders: int = 0


class ReplicaBandit(Policy):
    """An n-armed bandit over 1..max replicas per state (paper 003 sec. 4.2)."""

    NAME = "replicas-bandit"
    WANTS = ALL_EVENT_KINDS
    OPTIONS: ClassVar[Mapping[str, Option]] = {
        "epsilon": Option(0.1, float, "exploration probability (0..1)"),
        "state": Option(
            "DAY", _choice(STATE_SPACES), "SINGLE, DAY, WEEK, LOAD, DAY_LOAD, DAY_LENGTH"
        ),
        "penalty": Option(
            "wasted", _choice(("wasted", "contender", "none")), "wasted or contender"
        ),
        "delta": Option(0.5, float, "weight of the penalty (0..1)"),
        "qos": Option(parse_qos("within-hour"), parse_qos, "within-hour or overhead:P"),
        "max_replicas": Option(MAX_REPLICAS, _count, f"largest count tried (<= {MAX_REPLICAS})"),
        "history": Option(parse_history("all"), parse_history, "all, last:N or gaussian:N"),
    }

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(context, options)
        o = self.options
        self.agent = BanditAgent(o["history"], o["epsilon"], untried_zero=True)
        self.actions = list(range(1, o["max_replicas"] + 1))
        self.mean_watts = 0.0
        self.machines_joined(list(context.machines.values()))
        self.families: dict[str, Family] = {}
        self.judge: list[str] = []
        self.running = 0
        self.user_hours: dict[str, int] = {}

    def machines_joined(self, machines: Sequence[MachineInfo]) -> None:
        """The mean active draw the wasted-energy penalty prices a replica at, over all known."""
        inventory = self.context.machines.values()
        self.mean_watts = sum(m.active_watts for m in inventory) / max(len(inventory), 1)

    def _state(self, t: float, user: str) -> Hashable:
        load = min(9, int(10 * self.running / max(len(self.context.machines), 1)))
        length = self.user_hours.get(user, 0)  # live stand-in: the user's last job, in hours
        return {
            "SINGLE": 0,
            "DAY": hour_of_day(t),
            "WEEK": hour_of_week(t),
            "LOAD": load,
            "DAY_LOAD": (hour_of_day(t), load),
            "DAY_LENGTH": (hour_of_day(t), length),
        }[self.options["state"]]

    def observe(self, event: Event) -> None:
        if isinstance(event, JobQueued):
            if event.replicable and not event.prior_attempts:  # a family is born at submission
                state = self._state(event.time, event.user)
                self.families[event.job_id] = Family(event.time, state, event.user)
        elif isinstance(event, AttemptStarted):
            self.running += 1
        elif isinstance(event, AttemptEnded):
            self.running -= 1
            self._attempt_ended(event)
        elif isinstance(event, JobRemoved):
            self._removed(family_of(event.job_id))

    def _attempt_ended(self, event: AttemptEnded) -> None:
        fam = self.families.get(family_of(event.job_id))
        duration = event.time - event.started
        if event.outcome is AttemptOutcome.COMPLETED:
            self.user_hours[self._user(event.job_id)] = min(23, int(duration // HOUR))
        if fam is None:
            return
        if event.outcome is AttemptOutcome.COMPLETED:
            fam.finished, fam.exec_s = event.time, duration
            self.judge.append(family_of(event.job_id))
            return
        fam.wasted_wh += duration * event.active_watts / HOUR  # eq. 1: every other attempt
        if event.outcome is AttemptOutcome.REMOVED:
            if fam.finished is None:
                self._removed(family_of(event.job_id))
            elif event.started + fam.exec_s <= self.options["qos"].deadline(fam.submit, fam.exec_s):
                fam.contenders += 1  # killed, yet it would have met the bound too

    def _user(self, job_id: str) -> str:
        fam = self.families.get(family_of(job_id))
        return fam.user if fam else ""

    def _removed(self, job: str) -> None:
        fam = self.families.get(job)
        if fam is not None and fam.finished is None and fam.replicas:
            self.families.pop(job)
            self.agent.reward(fam.state, fam.replicas, replica_reward(False, 0.0))

    def _judge(self) -> None:
        """Replicas are killed right after the winner ends, so judge one cycle later."""
        o = self.options
        for job in self.judge:
            fam = self.families.pop(job, None)
            if fam is None or fam.finished is None or not fam.replicas:
                continue
            met = o["qos"].met(fam.submit, fam.finished, fam.exec_s)
            if o["penalty"] == "wasted":
                pen = wasted_penalty(
                    o["delta"], fam.wasted_wh, fam.replicas, fam.exec_s, self.mean_watts
                )
            elif o["penalty"] == "contender":
                pen = contender_penalty(o["delta"], fam.contenders, fam.replicas)
            else:
                pen = 0.0
            self.agent.reward(fam.state, fam.replicas, replica_reward(met, pen))
        self.judge = []

    def advise(self, view: PoolView, now: float) -> Advice:
        self._judge()
        advice = Advice()
        for job in view.new_jobs:
            fam = self.families.get(job)
            if fam is None:
                continue
            choice, _ = self.agent.choose(fam.state, self.actions, self.context.rng)
            fam.replicas = int(choice)  # type: ignore[call-overload]
            advice.jobs[job] = JobAdvice(replicas=fam.replicas)
        return advice

    def q_table(self) -> dict[Hashable, dict[int, float]]:
        """The learned value per state and replica count (paper 003 figure 9)."""
        return {s: {int(a): v for a, v in vals.items()} for s, vals in self.agent.values.items()}  # type: ignore[call-overload]

    def state_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent.state_dict(),
            "families": {
                job: {**asdict(fam), "state": json_key(fam.state)}
                for job, fam in self.families.items()
            },
            "judge": self.judge,
            "running": self.running,
            "user_hours": self.user_hours,
            "rng": self.context.rng.bit_generator.state,
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.agent.load_state(state["agent"])
        self.families = {
            job: Family(**{**fam, "state": from_json_key(fam["state"])})
            for job, fam in state["families"].items()
        }
        self.judge = list(state["judge"])
        self.running = int(state["running"])
        self.user_hours = {str(u): int(h) for u, h in state["user_hours"].items()}
        self.context.rng.bit_generator.state = state["rng"]
