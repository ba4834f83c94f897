"""The tree's rooms and the one direction imports may take between them (docs/architecture.md).

Every import counts, including those inside functions: a lazy import still couples two rooms.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("advisor", "plugins", "simulator")
MAX_LINES = 300

ROOMS = (  # longest prefix wins
    ("plugins.contract", "contract"),
    ("plugins", "policies"),
    ("simulator", "simulator"),
    ("advisor.daemon", "service"),
    ("advisor.condor", "service"),
    ("advisor.ports", "service"),
    ("advisor.lab", "lab"),
    ("advisor.commands", "cli"),
    ("advisor.cli", "cli"),
    ("advisor", "service"),
)
MAY_IMPORT = {
    "contract": {"contract"},
    "policies": {"contract", "policies"},
    "simulator": {"contract", "policies", "simulator"},
    "service": {"contract", "service"},
    "lab": {"contract", "policies", "simulator", "service", "lab"},
    "cli": {"contract", "policies", "simulator", "service", "lab", "cli"},
}


def room(module: str) -> str:
    for prefix, name in ROOMS:
        if module == prefix or module.startswith(prefix + "."):
            return name
    raise AssertionError(f"{module} is in no room of docs/architecture.md")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[dotted.removesuffix(".__init__")] = path
    return found


def imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.split(".")[0] in PACKAGES}


def test_imports_go_one_way_between_rooms() -> None:
    wrong = [
        f"{module} ({room(module)}) imports {target} ({room(target)})"
        for module, path in sorted(modules().items())
        for target in sorted(imports(path))
        if room(target) not in MAY_IMPORT[room(module)]
    ]
    assert wrong == []


def test_no_module_is_over_300_lines() -> None:
    long = {
        m: n for m, p in modules().items() if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}
