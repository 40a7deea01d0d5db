"""Each condition's record (``fsaccept/benchmarks/conditions.py``) against its parts: its
checks are the catalogue's and its folder's, its reference keys the schema's, its report
section both templates', its fragments files both templates include."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import FIXTURE
from fsaccept.benchmarks.conditions import CONDITIONS

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "fsaccept"
TEMPLATES = PACKAGE / "reporting" / "templates"
REPORTS = {"report.md.j2": "## {}", "report.html.j2": "<h2>{}"}


def _classes(folder: Path) -> set[str]:
    """The class names the files of a folder of ``checks/`` define."""
    return {node.name for path in folder.glob("*.py")
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ClassDef)}


def test_the_records_are_the_eight_conditions():
    assert set(CONDITIONS) == {"degraded", "scaling", "fill", "interference", "soak",
                               "semantics", "quota", "components"}


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_its_checks_are_its_folders_and_the_catalogues(name):
    cond = CONDITIONS[name]
    assert cond.checks, name
    assert all(c in registry.TESTS for c in cond.checks), name
    defined = _classes(REPO / "checks" / cond.checks_dir)
    # Every check its folder defines that the catalogue knows (fixtures excepted) is one
    # of its own, and each of its own is defined there.
    known = {c for c in defined if c in registry.TESTS and registry.TESTS[c].role != FIXTURE}
    assert set(cond.checks) == known, name


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_its_reference_keys_are_the_schemas(name):
    sections = json.loads((PACKAGE / "suite" / "reference.schema.json").read_text())
    for key in CONDITIONS[name].reference:
        if key.startswith("tests."):
            assert registry.owner_of(key.removeprefix("tests.")) is not None, key
        else:
            assert key in sections["properties"], key


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_its_report_section_and_fragments_are_both_reports(name):
    cond = CONDITIONS[name]
    assert (PACKAGE / cond.report).is_file(), cond.report
    for report, heading in REPORTS.items():
        text = (TEMPLATES / report).read_text()
        assert heading.format(cond.section) in text, (name, report)
        for fragment in cond.fragments:
            assert (TEMPLATES / fragment).is_file(), fragment
            assert f'include "{fragment}"' in text, (name, report, fragment)


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_its_user_page_exists(name):
    assert (REPO / "docs" / "user" / CONDITIONS[name].page).is_file()


def _modules_judges_reach() -> set[str]:
    """The modules whose functions a row of ``JUDGES`` calls (by name, or closed over)."""
    from fsaccept.reporting import evidence
    reached = set()
    for judge in evidence.JUDGES.values():
        called = [getattr(evidence, n, None) for n in judge.__code__.co_names]
        called += [c.cell_contents for c in judge.__closure__ or ()]
        reached |= {f.__module__ for f in called if callable(f) and hasattr(f, "__module__")}
    return reached


@pytest.mark.parametrize("name", sorted(CONDITIONS))
def test_its_judges_are_modules_the_sign_off_reaches(name):
    """Each of its ``judges`` exists; one under ``reporting/signoff/`` is reached by a row
    of ``JUDGES``, one that is its report module lays its own section's verdict out."""
    cond = CONDITIONS[name]
    assert cond.judges and len(set(cond.judges)) == len(cond.judges), name
    for judge in cond.judges:
        assert (PACKAGE / judge).is_file(), judge
        module = "fsaccept." + judge.removesuffix(".py").replace("/", ".")
        if judge.startswith("reporting/signoff/"):
            assert module in _modules_judges_reach(), (name, module)
        else:
            assert judge == cond.report, name
