"""The house's own limits (docs/dev/architecture.md): the session's context is laid out,
not decided, in ``build_context``; the sign-off's shared rules stay small; and a module
over 600 lines says at its top why it is one concept.  Read with ``ast``, as the floors
are (tests/unit/test_floors.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "fsaccept"

#: A module's length above which its docstring must say why it is one module.
LONG_MODULE = 600

#: The longest ``build_context`` may be: each section and its charts are its module's.
BUILD_CONTEXT_MAX = 80

#: The sign-off's table of judges and what every judge shares, at most.
EVIDENCE_MAX = 400


def _function_lines(path: Path, name: str) -> int:
    tree = ast.parse(path.read_text())
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    return node.end_lineno - node.lineno + 1


def test_build_context_lays_the_sections_out_in_fewer_than_80_lines():
    assert _function_lines(PACKAGE / "reporting" / "report.py", "build_context") \
        < BUILD_CONTEXT_MAX


def test_the_signoffs_table_of_judges_is_under_400_lines():
    lines = len((PACKAGE / "reporting" / "evidence.py").read_text().splitlines())
    assert lines < EVIDENCE_MAX, lines


@pytest.mark.parametrize("path", sorted(p.relative_to(PACKAGE).as_posix()
                                        for p in PACKAGE.rglob("*.py")
                                        if len(p.read_text().splitlines()) > LONG_MODULE))
def test_a_module_over_600_lines_says_why_it_is_one(path):
    doc = ast.get_docstring(ast.parse((PACKAGE / path).read_text())) or ""
    assert re.search(r"\b\d{3,} lines\b", doc), (
        f"fsaccept/{path} has over {LONG_MODULE} lines: say at its top why it is one "
        "concept (for example '(Over 700 lines, one concept: ...)'), or split it")
