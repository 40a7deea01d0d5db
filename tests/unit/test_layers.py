"""The lab leaves the product: no module of ``fsaccept/`` imports the lab (``lab/``: the
cluster emulated on one host, its GlusterFS volume, their ReFrame systems), at any depth,
so the package a site installs works without it; the lab may use the product.  And the
lab's cluster runs with the standard library alone (``scripts/local-cluster`` before any
virtual environment exists)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB = "lab"
#: The lab's modules that run before set-up has made .venv.
STANDALONE = ("cluster.py", "gluster.py")


def imported_modules(source: str) -> set[str]:
    """Every absolute module name the source imports, inside functions too, and the
    literal names handed to ``importlib.import_module`` or ``__import__``."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and (getattr(node.func, "attr", None) == "import_module"
                   or getattr(node.func, "id", None) in ("__import__", "import_module"))):
            out.add(node.args[0].value)
    return out


def top_level(names: set[str]) -> set[str]:
    return {name.split(".")[0] for name in names}


def lab_imports(package: Path) -> dict[str, list[str]]:
    """Each module under ``package`` that imports the lab, and what it imports."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        names = sorted(n for n in imported_modules(path.read_text()) if n.split(".")[0] == LAB)
        if names:
            found[str(path.relative_to(package.parent))] = names
    return found


def test_no_module_of_the_product_imports_the_lab():
    bad = lab_imports(REPO / "fsaccept")
    assert not bad, f"the product imports the lab: {bad}"


def test_a_product_module_that_imports_the_lab_is_named(tmp_path):
    deep = tmp_path / "fsaccept" / "suite"
    deep.mkdir(parents=True)
    (deep / "sites.py").write_text("def f():\n    from lab.cluster import PARTITION\n")
    (deep / "spack.py").write_text("import fsaccept.core\n")
    assert lab_imports(tmp_path / "fsaccept") == {"fsaccept/suite/sites.py": ["lab.cluster"]}


@pytest.mark.parametrize("source,found", [
    ("import lab.cluster", {"lab"}),
    ("def f():\n    from lab import gluster\n", {"lab"}),
    ("import importlib\nimportlib.import_module('lab.emulated')", {"importlib", "lab"}),
    ("from . import lab\nimport fsaccept.suite.sites\n", {"fsaccept"}),
])
def test_imports_are_found_at_any_depth(source, found):
    assert top_level(imported_modules(source)) == found


@pytest.mark.parametrize("name", STANDALONE)
def test_the_labs_cluster_imports_the_standard_library_only(name):
    names = top_level(imported_modules((REPO / LAB / name).read_text()))
    assert names - set(sys.stdlib_module_names) - {LAB} == set()


def python_without_site_packages(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """This Python with no site-packages (-S) and no PYTHONPATH: the standard library only,
    as before set-up has made .venv."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-S", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_the_cluster_starts_with_the_standard_library_only():
    proc = python_without_site_packages("-m", "lab.cluster", "--help", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: local-cluster")


def test_the_cluster_run_by_its_path_finds_the_lab(tmp_path):
    # How the cluster starts each node's orphan reaper: by file path, from anywhere.
    proc = python_without_site_packages(str(REPO / LAB / "cluster.py"), "--help", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
