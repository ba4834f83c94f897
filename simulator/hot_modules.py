"""The modules a replay spends its time in, which a regular install compiles with mypyc.

Read by ``setup.py`` (without importing the package) and by ``bench``, which says whether they
run compiled. Compiled and pure Python give the same results to the byte (a test compares them).
A module listed here may not be subclassed by uncompiled code.
"""

import importlib

HOT_MODULES = (
    "simulator/engine.py",
    "simulator/campus/pool.py",
    "simulator/campus/job_book.py",
    "simulator/campus/idle_jobs.py",
    "simulator/campus/negotiator.py",
    "simulator/campus/shared_pool.py",
    "simulator/campus/packing.py",
    "simulator/campus/queue_heads.py",
    "simulator/campus/advice_groups.py",
    "plugins/contract/ledger.py",
    "plugins/contract/told.py",
    "simulator/campus/group_levels.py",
    "simulator/indexed_set.py",
    "plugins/contract/clock.py",
    "plugins/bandits/agent.py",
    "plugins/bandits/decision.py",
    "plugins/bandits/hindsight.py",
    "plugins/bandits/history.py",
    "plugins/bandits/jobs.py",
    "plugins/bandits/rewards.py",
    "plugins/bandits/rows.py",
)


def compiled_count() -> int:
    """How many of the hot modules this process runs compiled (imports them all)."""
    names = (path.removesuffix(".py").replace("/", ".") for path in HOT_MODULES)
    return sum(not str(importlib.import_module(name).__file__).endswith(".py") for name in names)
