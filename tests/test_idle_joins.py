"""Machines joining a live pool while its idle models retrain (the retraining runs in its own
thread, outside the host's lock, docs/live-daemon.md), and what a retraining says of them."""

from __future__ import annotations

import threading

from plugins.contract.events import OwnerSessionEnded, OwnerSessionStarted
from plugins.contract.policy import MachineInfo, PolicyContext
from plugins.idle.policy import IdleMinPolicy

DAY = 86400.0
START = 1262304000.0


def test_machines_that_join_during_a_retraining_do_not_fail_it() -> None:
    """Each join lays the machines out anew; a retraining reads one layout throughout. Filled in
    place, the layout failed every retraining a join overlapped (KeyError), and last month's
    models stayed for another month."""
    machines = {
        f"pc{i}": MachineInfo(f"pc{i}", f"lab{i % 7}", "n", 57.0, 40.0, 2.0) for i in range(300)
    }
    options = {"trees": 1, "max_depth": 2, "mlp_epochs": 1, "max_samples": 20}
    policy = IdleMinPolicy(PolicyContext(machines=machines, seed=1), options)
    for name in list(machines)[:20]:
        for day in range(3):
            policy.observe(OwnerSessionStarted(START + day * DAY + 36000, name))
            policy.observe(OwnerSessionEnded(START + day * DAY + 39600, name))
    assert policy.retrain(START + 5 * DAY) == (  # what the daemon logs after a retraining
        "20 models; 280 of 300 machines have none yet (fewer than 10 owner-free periods of their"
        " machine seen): their advice is neutral"
    )
    done = threading.Event()
    joined: list[str] = []

    def join() -> None:
        while not done.is_set() and len(joined) < 500:  # bounded: the retraining is short
            info = MachineInfo(f"new{len(joined)}", "lab0", "n", 57.0, 40.0, 2.0)
            machines[info.name] = info
            policy.machines_joined([info])
            joined.append(info.name)

    joiner = threading.Thread(target=join)
    joiner.start()
    try:
        policy.retrain(START + 5 * DAY)
    finally:
        done.set()
        joiner.join()
    assert joined and set(policy.models) == set(list(machines)[:20])
