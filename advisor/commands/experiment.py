"""``experiment NAME``: the papers' tables and figures, found in ``advisor/lab/experiments``.

Listing them imports every experiment (matplotlib, the simulator): done only when chosen.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from types import ModuleType

import advisor.lab.experiments


def experiment_modules() -> list[ModuleType]:
    """Every module in ``advisor.lab.experiments`` that defines an experiment, sorted by name."""
    modules = []
    for info in pkgutil.iter_modules(advisor.lab.experiments.__path__):
        module = importlib.import_module(f"advisor.lab.experiments.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            modules.append(module)
    return sorted(modules, key=lambda m: m.NAME)


def register(parser: argparse.ArgumentParser) -> None:
    names = parser.add_subparsers(dest="experiment", required=True, metavar="NAME")
    for module in experiment_modules():
        one = names.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(one)
        one.set_defaults(handler=module.run)
