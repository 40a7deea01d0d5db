"""The product's floors point down: ``core`` (the data model and pure helpers) imports no
other floor; ``benchmarks`` only ``core``; ``suite`` (reference files, provisioning,
Spack, site selection) only those two; ReFrame's tests (``rfm``) and ``reporting`` stand
on all of them, and nothing imports the command line.  Imports are read with ``ast`` at
any depth, so an import hidden inside a function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "fsaccept"

#: Each floor and the floors it may import (besides itself).
MAY_IMPORT = {
    "core": set(),
    "benchmarks": {"core"},
    "suite": {"core", "benchmarks"},
    "rfm": {"core", "benchmarks", "suite"},
    "reporting": {"core", "benchmarks", "suite"},
}


def _imports(path: Path) -> set[str]:
    """The ``fsaccept.<floor>`` floors a module imports."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "fsaccept" and len(parts) > 1:
                out.add(parts[1])
    return out


@pytest.mark.parametrize("floor", sorted(MAY_IMPORT))
def test_a_floor_imports_only_the_floors_below_it(floor):
    if not (PACKAGE / floor).is_dir():
        pytest.skip(f"no fsaccept/{floor}")
    bad = {}
    for path in sorted((PACKAGE / floor).rglob("*.py")):
        up = {f for f in _imports(path) if f in MAY_IMPORT or f == "cli"} - MAY_IMPORT[floor] \
            - {floor}
        if up:
            bad[str(path.relative_to(PACKAGE))] = sorted(up)
    assert not bad, f"imports that point up or sideways: {bad}"
