"""The developers' API reference, ``docs/dev/api.md``, made from the code: the record
types a benchmark or a condition is declared with (each field with its type, its default
and its ``#:`` comment, read from the source as Sphinx's autodoc reads them), and
:class:`~fsaccept.rfm.benchmark.BenchmarkTest`'s pipeline hooks in the order ReFrame
runs them (its stage, the class that defines it, the first line of its docstring).

It sits on the ``rfm/`` floor because the hooks are ReFrame's registry of that class.
``python -m fsaccept.rfm.apiref docs/dev/api.md`` refills the page's generated sections
(``<!-- BEGIN GENERATED: name -->``, as :mod:`fsaccept.suite.listing` fills the user
pages'); ``tests/unit/test_docs.py`` fails when the page and the code differ.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
import textwrap
from pathlib import Path

from fsaccept.benchmarks.catalogue import Benchmark, Condition, DatasetMargin, TestSpec
from fsaccept.benchmarks.fio.command import Kind
from fsaccept.rfm.benchmark import BenchmarkTest
from fsaccept.suite.listing import fill_generated

#: The record types, in the order the page gives them.
RECORDS = (Benchmark, TestSpec, Condition, Kind, DatasetMargin)
#: ReFrame's pipeline stages in the order it runs them; a hook runs before (``pre_``) or
#: after (``post_``) its stage.
STAGES = ("init", "setup", "compile", "compile_wait", "run", "run_wait", "sanity",
          "performance", "cleanup")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def field_comments(cls: type) -> dict[str, str]:
    """``{field: its #: comment}`` of a dataclass: the ``#:`` lines right above a field,
    or the ``#:`` comment at the end of its line."""
    lines, _ = inspect.getsourcelines(cls)
    body = ast.parse(textwrap.dedent("".join(lines))).body[0]
    comments: dict[str, str] = {}
    for node in body.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        line = lines[node.lineno - 1]
        said = [line.split("#:", 1)[1].strip()] if "#:" in line else []
        above = node.lineno - 2
        while not said and above >= 0 and lines[above].strip().startswith("#:"):
            above -= 1
        said = said or [lines[i].strip().removeprefix("#:").strip()
                        for i in range(above + 1, node.lineno - 1)]
        comments[node.target.id] = " ".join(said)
    return comments


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return f"`{f.default!r}`"
    if f.default_factory is not dataclasses.MISSING:
        return f"`{f.default_factory()!r}`"
    return "required"


def records_reference() -> str:
    """One table per record type: its fields, types, defaults and comments."""
    out = []
    for cls in RECORDS:
        comments = field_comments(cls)
        doc = inspect.getdoc(cls) or ""
        out += [f"### `{cls.__name__}` (`{cls.__module__}`)", "", " ".join(doc.split()), "",
                "| field | type | default | what it is |", "| --- | --- | --- | --- |"]
        out += [f"| `{f.name}` | `{_cell(str(f.type))}` | {_default(f)} | "
                f"{_cell(comments.get(f.name, ''))} |" for f in dataclasses.fields(cls)]
        out.append("")
    return "\n".join(out)


def hooks_in_order(cls: type = BenchmarkTest) -> list[tuple[str, str, str]]:
    """(when, defining class, hook name) of ``cls``'s pipeline hooks, in the order ReFrame
    runs them: by stage, ``pre_`` before ``post_``; within one, those it runs last (its
    ``always_last``) after the others, else in the order the classes declare them."""
    hooks = []
    for order, hook in enumerate(cls._rfm_hook_registry):
        for when, last in hook.stages:
            side, stage = when.split("_", 1)
            hooks.append(((STAGES.index(stage), side == "post", last, order), when, hook))
    return [(when, hook.__qualname__.split(".")[0], hook.__name__)
            for _, when, hook in sorted(hooks, key=lambda h: h[0])]


def hooks_reference() -> str:
    """``BenchmarkTest``'s hooks, in order, each with the first line of its docstring."""
    rows = ["| # | when | class | hook | what it does |", "| --- | --- | --- | --- | --- |"]
    for i, (when, owner, name) in enumerate(hooks_in_order(), 1):
        doc = inspect.getdoc(getattr(BenchmarkTest, name)) or ""
        first = doc.split("\n\n")[0]
        rows.append(f"| {i} | `{when}` | `{owner}` | `{name}` | {_cell(first)} |")
    return "\n".join(rows) + "\n"


#: The generated sections of docs/dev/api.md.
GENERATED = {"records": records_reference, "hooks": hooks_reference}


def fill(text: str) -> str:
    """``text`` with this module's generated sections made anew."""
    return fill_generated(text, GENERATED)


if __name__ == "__main__":  # python -m fsaccept.rfm.apiref FILE...: refill the page
    for arg in sys.argv[1:]:
        path = Path(arg)
        path.write_text(fill(path.read_text()))
