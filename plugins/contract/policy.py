"""The policy protocol: ``observe(event)`` then ``advise(view, now)``, pure and seeded.

A policy never reads a clock, a file or the network: time arrives as ``now``, the pool arrives as a
``PoolView``, randomness comes from ``context.rng``. The simulator and the daemon drive the
very same objects, so a replay predicts a deployment (the COBalD ``regulate()`` split).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from plugins.contract.advice import Advice
from plugins.contract.events import ALL_POWER_STATES, Event, PowerState


@dataclass(frozen=True, slots=True)
class MachineInfo:
    """Static facts about a machine: where it is and what it draws when running a job."""

    name: str
    cluster: str
    mtype: str
    active_watts: float
    idle_watts: float
    sleep_watts: float
    jobs_at_once: int = 1
    """How many one-core jobs it runs at once: its cores when partitionable, one per static
    slot otherwise (docs/slots.md)."""


@dataclass(frozen=True, slots=True)
class MachineView:
    """A machine the negotiator could use now: awake and free (``idle``) or ``sleep``-ing.

    ``follows``: the named advice it carries now (None: its own advice, or none). A policy may
    leave such a machine out of its answer: it keeps following the name. ``free_cores`` and
    ``free_memory_mb``: what a job may still take there (docs/slots.md); a partitionable machine
    running jobs with room left is ``idle`` too, as its partitionable slot stays Unclaimed. The
    negotiator never matches a job the machine cannot fit, whatever its advice."""

    name: str
    state: str
    free_since: float
    follows: str | None = None
    free_cores: int = 1
    free_memory_mb: float = math.inf
    can_sleep: bool = True
    """False for a machine that would not sleep on advice (its startd ignores HIBERNATE): a
    power policy neither reserves it nor lets it sleep, as holding it awake only idles it."""


@dataclass(frozen=True, slots=True)
class PoolView:
    """What a policy may look at when advising: the candidate machines and the idle queue shape."""

    machines: Sequence[MachineView]
    idle_jobs_by_prior_hours: Sequence[int]
    """Every idle job by the whole hours of its longest attempt, those advice keeps off
    included: what the schedd and the epochs show (docs/live-daemon.md)."""
    new_jobs: Sequence[str] = ()
    """The jobs submitted since the last view."""
    idle_jobs_by_cpus: Mapping[int, int] = field(default_factory=dict)
    """The same idle jobs by the cores they request (``RequestCpus``); empty where the source
    does not say, and then each counts as a one-core job."""

    def one_core_jobs(self, most_at_once: int) -> int:
        """The idle jobs as one-core jobs (``as_one_core_jobs``)."""
        by_cpus = self.idle_jobs_by_cpus or {1: sum(self.idle_jobs_by_prior_hours)}
        return sum(n * as_one_core_jobs(cpus, most_at_once) for cpus, n in by_cpus.items())


def as_one_core_jobs(cpus: int, most_at_once: int) -> int:
    """A job that requests ``cpus`` cores takes that many of a partitionable machine and a whole
    single-slot one, so it counts as min(cpus, ``most_at_once``) one-core jobs, the most one
    machine of the pool runs at once (docs/slots.md)."""
    return min(cpus, most_at_once)


class Oracle(Protocol):
    """Future knowledge, given only to policies whose name says ``oracle`` (or ``crystal``)."""

    def free_until(self, machine: str, t: float) -> float:
        """When the machine is next taken from jobs (owner login or reboot) after ``t``."""
        ...

    def job_runtime(self, job_id: str) -> float | None:
        """The job's execution time, or None when it never finishes."""
        ...


@dataclass
class PolicyContext:
    """What a policy is built with: the inventory, a seeded generator, and maybe an oracle."""

    machines: Mapping[str, MachineInfo]
    seed: int = 0
    reboot_hour: float | None = 3.0
    """The hour (UTC) the machines reboot each night unless an owner is logged in, as on the
    papers' campus; None on a pool whose machines do not (``pool.reboot_hour``)."""
    oracle: Oracle | None = None
    terms: Sequence[tuple[float, float]] = ()
    """Teaching terms (start, end) from the scenario or site configuration (paper 004 features)."""
    parallel_map: Callable[[Callable[[Any], Any], Sequence[Any]], Sequence[Any]] | None = None
    """How to map a pure function over many tasks (worker processes); None: builtin ``map``."""
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)


class OptionError(ValueError):
    """A policy option is unknown or has a bad value; the message names the key and the fix."""


@dataclass(frozen=True)
class Option:
    """One tunable of a policy: default, parser from a string, an optional check and a help line."""

    default: Any
    parse: Callable[[str], Any]
    help: str
    check: Callable[[Any], str | None] | None = None


class Policy(ABC):
    """Base class for policies registered under the ``htcondor_advisor.policies`` entry points."""

    NAME: ClassVar[str] = "policy"
    VERSION: ClassVar[str] = "1"
    OPTIONS: ClassVar[Mapping[str, Option]] = {}
    WANTS: ClassVar[frozenset[type]] = frozenset()
    """Event kinds this policy learns from. In the contract because it is what the policy is:
    the daemon counts what was learned by it, and a replay builds no event nobody reads."""
    WANTS_POWER: ClassVar[frozenset[PowerState]] = ALL_POWER_STATES
    """Of ``MachinePowerChanged`` (when wanted), the new states learned from; in the contract for
    the same reason (a campus year has millions of sleeps and wakes few policies read)."""
    NEEDS_ORACLE: ClassVar[bool] = False
    """Reads the future (``context.oracle``): replays only, refused live."""
    TAKES_IDLE_MODELS: ClassVar[bool] = False
    """Starts from stored idle-time models (``install``; a store ``train-idle`` wrote)."""
    SNAPSHOT_LEAVES_OUT: ClassVar[frozenset[type]] = frozenset()
    """Machine event kinds whose learning ``state_dict`` leaves out, being too bulky to rewrite
    every few minutes (a year of owner sessions); a live daemon feeds them again at start from
    its journal, up to where the snapshot had learned."""
    SERVES: ClassVar[frozenset[str]] = frozenset({"campus"})
    """The models it can act in (``registry.MODELS``); ``registry.policy_for`` refuses the rest."""
    ASKS_ONLY_WHEN_FREED: ClassVar[bool] = False
    """True: advice for a free machine does not depend on it being awake or asleep, so a driver
    asks about a machine when it becomes free or its advice lapses, and a machine that merely
    falls asleep, wakes or reboots while free keeps its advice (a year has millions of those).
    In the contract because only the policy knows what its advice depends on."""

    def __init__(self, context: PolicyContext, options: Mapping[str, Any] | None = None) -> None:
        self.context = context
        self.options = parse_options(type(self), options or {})

    @property
    def label(self) -> str:
        """``AdvisorPolicy``: name and version."""
        return f"{self.NAME}/{self.VERSION}"

    def machines_joined(self, machines: Sequence[MachineInfo]) -> None:  # noqa: B027
        """Machines the pool shows for the first time; ``context.machines`` has them already.

        A replay knows its inventory when the policy is built; a live pool is still empty then
        and grows as startds report. A policy that keeps anything per machine or per group of
        machines extends it here. Machines that vanish are kept: a desktop switched off for the
        night is the same machine in the morning. Called again for known machines, it does
        nothing."""

    def observe(self, event: Event) -> None:  # noqa: B027 (optional hook)
        """Learn from one event (default: nothing to learn)."""

    @abstractmethod
    def advise(self, view: PoolView, now: float) -> Advice:
        """Advice for the machines in ``view`` (and any per-job advice), as of ``now``.

        A policy serving the ``dedicated`` model is asked there with that model's view, a
        ``ClusterView`` (``plugins/power/view.py``), and answers per node."""

    def retrain(self, now: float) -> str | None:
        """Refit learned models on what was observed before ``now``; what an administrator
        should read of it (how many models, which machines have none), if anything.

        The replay calls it at each month boundary, the daemon on its retrain schedule from a
        worker thread: fit new objects from a copy of the observations and swap them in with one
        assignment at the end, so advice keeps flowing meanwhile.
        """
        return None

    def explain(self, machine: str) -> dict[str, Any]:
        """What the advice for ``machine`` rests on beyond the state filed under its name (which
        ``explain`` finds itself): e.g. the values of the cluster a policy decides for. JSON-
        compatible, under labels saying whose values they are; shown as given. Default: none."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """Everything learned, as JSON-compatible data."""
        return {}

    def load_state(self, state: Mapping[str, Any]) -> None:  # noqa: B027 (optional hook)
        """Restore what ``state_dict`` returned."""


def parse_options(policy: type[Policy], raw: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults overlaid with ``raw`` (strings are parsed); unknown keys and bad values raise."""
    values = {key: opt.default for key, opt in policy.OPTIONS.items()}
    for key, value in raw.items():
        opt = policy.OPTIONS.get(key)
        if opt is None:
            known = ", ".join(sorted(policy.OPTIONS)) or "none"
            raise OptionError(f"policy {policy.NAME!r}: unknown option {key!r} (options: {known})")
        try:
            parsed = opt.parse(value) if isinstance(value, str) else value
        except (TypeError, ValueError) as exc:  # int("abc") says nothing of the option
            kind = {int: "an integer", float: "a number"}.get(opt.parse)  # type: ignore[call-overload]
            why = f"must be {kind} (default {opt.default})" if kind else str(exc)
            raise OptionError(f"policy {policy.NAME!r}: option {key}={value!r}: {why}") from None
        if isinstance(parsed, float) and not math.isfinite(parsed):  # as the daemon's file
            problem: str | None = "must be a finite number"
        else:
            problem = opt.check(parsed) if opt.check else None
        if problem:
            raise OptionError(f"policy {policy.NAME!r}: option {key}={value!r}: {problem}")
        values[key] = parsed
    return values
