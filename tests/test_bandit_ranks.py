"""What a placement bandit's draw publishes: ranks for as many machines as a cycle can fill, and
how the negotiator draws among machines that rank alike."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from tracekit import MONDAY, H, inventory, trace

from plugins.bandits.agent import BanditAgent
from plugins.bandits.decision import draw, ranks
from plugins.bandits.hindsight import FreeMachines
from plugins.bandits.history import HistorySpec
from plugins.bandits.placement import QUEUE, ComputerBandit
from plugins.contract.advice import PRIOR_HOURS_CLASSES, Advice, MachineAdvice
from plugins.contract.ledger import AdviceLedger, Filed
from plugins.contract.policy import MachineView, PolicyContext, PoolView
from simulator.campus.advice_groups import FEW_GROUPS, AdviceGroups
from simulator.campus.replay import machine_infos
from simulator.indexed_set import IndexedSet

TEN = MONDAY + 10 * H
ESTIMATES = {"pc0": 0.9, "pc1": 0.5, "pc2": 0.5, "pc3": 0.2, "pc4": -0.5}
"""pc5 is untried: valued 0 (untried_zero, the default)."""


def ranked_by_class(idle: dict[int, int], queue_values: dict[int, float]) -> dict[int, set[str]]:
    """Per class with idle jobs, the machines its jobs may take after one greedy draw at 10:00
    on six free machines with ``ESTIMATES`` in every class."""
    context = PolicyContext(machine_infos(trace(inventory(6))), seed=1)
    policy = ComputerBandit(context, {"epsilon": "0"})
    for k in idle:
        for machine, value in ESTIMATES.items():
            policy.agent.reward((10, k), machine, value)
        policy.agent.reward((10, k), QUEUE, queue_values.get(k, -1.0))
    counts = tuple(idle.get(k, 0) for k in range(PRIOR_HOURS_CLASSES))
    view = PoolView([MachineView(f"pc{i}", "idle", TEN) for i in range(6)], counts, ["j"])
    rows = policy.advise(view, TEN).shared
    return {k: {m for m, row in rows.items() if row.rank_for(k) >= 0} for k in idle}


def test_a_draw_ranks_as_many_machines_as_jobs_wait_ties_included() -> None:
    # two jobs: the greedy pc0 and the next best estimate, 0.5, which pc1 and pc2 share
    assert ranked_by_class({0: 2}, {}) == {0: {"pc0", "pc1", "pc2"}}
    # four jobs: down to pc3 (0.2); the untried pc5 (0) and pc4 (-0.5) stay off
    assert ranked_by_class({0: 4}, {}) == {0: {"pc0", "pc1", "pc2", "pc3"}}
    # more jobs than machines the estimates prefer to queueing (0.1): those, no more
    assert ranked_by_class({0: 9}, {0: 0.1}) == {0: {"pc0", "pc1", "pc2", "pc3"}}


def test_jobs_of_a_class_left_queued_do_not_count_as_demand() -> None:
    # class 3 prefers queueing (1.0 beats every machine): its 50 jobs start nowhere this cycle,
    # so class 0's single job needs one machine ranked, the greedy one
    assert ranked_by_class({0: 1, 3: 50}, {3: 1.0}) == {0: {"pc0"}, 3: set()}


def groups_of(awake: IndexedSet, names: dict[str, MachineAdvice] | None = None) -> AdviceGroups:
    values = names or {}
    return AdviceGroups((awake, IndexedSet()), random.Random(7), values.__getitem__)


@pytest.mark.parametrize("sizes", [(3, 1), (1,) * (FEW_GROUPS + 4)])
def test_machines_that_rank_alike_are_drawn_uniformly_across_their_groups(
    sizes: tuple[int, ...],
) -> None:
    """A few groups (3 + 1 machines) are drawn in proportion to their sizes; many (a computer
    bandit's tie) from one list of their members: either way each machine equally often."""
    n = sum(sizes)
    awake = IndexedSet()
    for m in range(n):
        awake.add(m)
    groups = groups_of(awake)
    # different advice values, the same rank for class 0: one level of len(sizes) groups
    values = [MachineAdvice(rank=1.0, predicted_idle_s=float(g)) for g in range(len(sizes))]
    filed: list[Filed] = [v for v, size in zip(values, sizes, strict=True) for _ in range(size)]
    groups.refile(list(range(n)), filed)
    assert len(groups.levels(0)) == 1
    drawn = Counter(groups.pick(0, 0) for _ in range(2000 * n))
    assert set(drawn) == set(range(n))
    assert all(1700 < count < 2300 for count in drawn.values()), drawn  # 2000 if uniform
    awake.discard(n - 1)  # its owner took it: never drawn again, the others still are
    assert {groups.pick(0, 0) for _ in range(100 * n)} == set(range(n - 1))


def test_a_level_drawn_out_is_drawn_again_once_its_machine_is_free_and_refiled() -> None:
    awake = IndexedSet()
    for m in range(2):
        awake.add(m)
    groups = groups_of(awake)
    best, next_best = MachineAdvice(rank=2.0), MachineAdvice(rank=1.0)
    groups.refile([0, 1], [best, next_best])
    assert groups.pick(0, 0) == 0
    awake.discard(0)  # a job took it
    assert groups.pick(0, 0) == 1  # the top level is drawn out: the next one serves
    awake.add(0)
    groups.refile([0], [best])  # free again, with the same advice
    assert groups.pick(0, 0) == 0


def test_names_lapsed_and_renewed_in_one_round_never_reach_the_groups() -> None:
    cache, awake = AdviceLedger(3600.0), IndexedSet()
    awake.add(0)
    row = MachineAdvice(rank_by_prior_hours=(2.0,) + (-1.0,) * (PRIOR_HOURS_CLASSES - 1))
    groups = AdviceGroups((awake, IndexedSet()), random.Random(1), lambda n: cache.shared[n][0])
    groups.apply(cache.take(Advice(shared={"pc0": row}, shared_until=H), [], 0.0))
    groups.refile([0], cache.store_all([(0, "pc0")], 0.0))
    levels = groups.levels(0)
    assert cache.expire(H) == [] and cache.lapsed == ["pc0"]  # the hour passed unrenewed
    groups.apply(cache.take(Advice(shared_until=3 * H), [], H))  # renewed in the same round
    assert groups.levels(0) is levels and groups.pick(1, 0) is None  # class 1 still kept off
    assert cache.get(0) is row
    cache.expire(3 * H)
    groups.apply(cache.take(Advice(), [], 3 * H))  # lapsed, not renewed: neutral (rank 0)
    assert cache.get(0).rank_for(1) == 0.0 and groups.pick(1, 0) == 0


@pytest.mark.parametrize("untried_zero", [True, False])
def test_a_draw_among_few_actions_in_python_equals_the_numpy_one(untried_zero: bool) -> None:
    # The system level draws on Python lists, the cluster and computer levels on numpy arrays;
    # the same estimates and seed must give the same choice, greedy action, probe and ranks,
    # and leave the generator in the same state (ties, untried actions and queueing included).
    actions = [f"a{i}" for i in range(12)]
    free = FreeMachines(lambda m: int(m.split("-")[0][1:]), len(actions))
    for i in range(0, 12, 2):
        for j in range(3):
            free.free(f"a{i}-{j}", 0.0)
    setup = np.random.default_rng(5)
    for trial in range(300):
        agent = BanditAgent(HistorySpec(), epsilon=0.3, untried_zero=untried_zero)
        agent.index_actions(actions)
        state = (trial % 24, 0)
        for action in setup.choice(actions, size=int(setup.integers(0, 9)), replace=False):
            agent.reward(state, action, float(setup.choice([-0.5, 0.0, 0.25, 0.25, 0.8])))
        if trial % 3:
            agent.reward(state, QUEUE, float(setup.choice([-1.0, 0.25, 0.5])))
        demand = int(setup.integers(0, 5))
        available = [p for p in range(12) if free.members[p]]
        outcomes = []
        for positions in (available, np.array(available)):
            rng = np.random.default_rng(trial)
            drawn = draw(agent, free, actions, state, positions, rng)
            column = ranks(drawn, actions, demand)
            outcomes.append((drawn[:5], column, rng.random()))
        assert outcomes[0] == outcomes[1]


def test_a_row_is_stated_in_full_once_then_by_the_classes_whose_rank_changed() -> None:
    """Rounds of a bandit's advice keep a consumer's value of every row equal to the bandit's."""
    policy = ComputerBandit(PolicyContext(machine_infos(trace(inventory(6))), seed=3), {})
    draws = random.Random(3)
    for k in range(4):
        for i in range(6):
            policy.agent.reward((10, k), f"pc{i}", draws.uniform(-1, 1))
        policy.agent.reward((10, k), QUEUE, draws.uniform(-1, 0))
    ledger, by_class = AdviceLedger(3600.0), 0
    stated: set[str] = set()
    for step in range(30):
        idle = tuple(draws.randrange(4) if k < 4 else 0 for k in range(PRIOR_HOURS_CLASSES))
        views = [MachineView(f"pc{i}", "idle", TEN) for i in range(6)]
        advice = policy.advise(PoolView(views, idle, [f"j{step}"]), TEN + 60 * step)
        assert advice.shared_ranks.keys() <= stated  # by class only once stated in full
        stated |= advice.shared.keys()
        by_class += len(advice.shared_ranks)
        ledger.take(advice, [], TEN + 60 * step)
        assert {name: ledger.named(name)[0].rank_by_prior_hours for name in stated} == {  # type: ignore[index]
            name: tuple(policy.rows.rows[name]) for name in stated
        }
    assert by_class > 10 and stated == {f"pc{i}" for i in range(6)}
