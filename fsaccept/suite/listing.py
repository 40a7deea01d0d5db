"""The catalogue and the reference schemas described in words, the way ``io500 --list``
describes its options: ``fsaccept reference --list [KEY]`` prints them, and the docs'
check, condition, reference-key and server-probe tables are these same tables (a test
compares them), so that what the documentation says of a check, a condition, an option or
a probe cannot drift from the code.
"""

from __future__ import annotations

import json
import re
import sys
from importlib import resources
from pathlib import Path
from collections.abc import Callable
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import (ACCEPTANCE, FILLED_PREFIX, FIXTURE, PREFLIGHT,
                                           SCALING)
from fsaccept.benchmarks.conditions import CONDITIONS
from fsaccept.core import servers
from fsaccept.core.degraded import SCENARIO_PARAMETER
from fsaccept.suite.reference import fill_tests


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def checks_table() -> str:
    """One row per check of the catalogue (fixtures excepted): its class, tags, reference
    key and figures, and what it measures."""
    rows = ["| check (`checks/`) | tags | reference key | figures | what it measures |",
            "| --- | --- | --- | --- | --- |"]
    for spec in registry.TESTS.values():
        # A sweep's checks are their healthy test's, one per dimension, and a filled
        # re-run is its empty test's (docs/user: the Scaling sweeps and Fill level pages
        # describe them).
        if spec.role in (FIXTURE, SCALING) or spec.filled:
            continue
        figures = ", ".join(f"`{f}`" for f in spec.figures) or "—"
        rows.append(f"| `{spec.check}` | {', '.join(sorted(spec.all_tags))} | "
                    f"{'`' + spec.key + '`' if spec.key else '—'} | {_cell(figures)} | "
                    f"{_cell(spec.descr)} |")
    return "\n".join(rows) + "\n"


def conditions_table() -> str:
    """One row per condition (:data:`fsaccept.benchmarks.conditions.CONDITIONS`): the
    reference keys it reads, its checks, its folder, its sign-off judge, its report section
    and fragments."""
    rows = ["| condition | reference keys | checks | folder | sign-off judge | "
            "report section | what it is |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for cond in CONDITIONS.values():
        keys = ", ".join(f"`{k}`" for k in cond.reference)
        checks = ", ".join(f"`{c}`" for c in cond.checks)
        title = cond.section + (" *its test*" if cond.section.endswith(":") else "")
        section = f"{title} (`{cond.report}`" + "".join(
            f", `{f}`" for f in cond.fragments) + ")"
        rows.append(f"| [{cond.name}]({cond.page}) | {keys} | {_cell(checks)} | "
                    f"`checks/{cond.checks_dir}` | {_cell(', '.join(f'`{j}`' for j in cond.judges))} | "
                    f"{_cell(section)} | "
                    f"{_cell(cond.descr)} |")
    return "\n".join(rows) + "\n"


def _main_schema() -> dict[str, Any]:
    return json.loads(resources.files("fsaccept").joinpath("suite/reference.schema.json")
                      .read_text())


def _resolve(ref: str) -> dict[str, Any]:
    """The schema a ``$ref`` such as ``ior.schema.json#/$defs/common`` names."""
    name, _, pointer = ref.partition("#")
    doc = _main_schema() if name == "reference.schema.json" else registry.schemas()[name]
    for part in [p for p in pointer.split("/") if p]:
        doc = doc[part]
    return doc


def entry_options(key: str) -> dict[str, dict[str, Any]]:
    """Each option of reference entry ``tests.<key>``: its schema (merged from the entry's
    own and the ``allOf`` it builds on) and whether it is required."""
    bench = registry.owner_of(key)
    if bench is None:
        raise KeyError(key)
    ref = next(r for k, r in bench.reference_keys.items() if k == key or k.startswith("^"))
    schema = _resolve(ref if "#" in ref else ref + "#")
    props: dict[str, dict[str, Any]] = {}
    required: set[str] = set()
    for part in [*(_resolve(p["$ref"]) for p in schema.get("allOf", []) if "$ref" in p),
                 schema]:
        required |= set(part.get("required", ()))
        for name, sub in part.get("properties", {}).items():
            if isinstance(sub, dict):
                merged = dict(props.get(name, {}))
                merged.update(_resolve(sub["$ref"]) if "$ref" in sub else sub)
                props[name] = merged
            else:
                props.setdefault(name, {})
    return {name: dict(sub, required=name in required) for name, sub in sorted(props.items())}


def _kind(sub: dict[str, Any]) -> str:
    if "enum" in sub:
        return " | ".join(map(str, sub["enum"]))
    if "const" in sub:
        return str(sub["const"])
    kind = sub.get("type", "object" if "properties" in sub else "")
    return "/".join(kind) if isinstance(kind, list) else str(kind)


def keys_table(key: str | None = None) -> str:
    """Without ``key``: one row per reference key (the test that reads it, its required
    options); with one: a row per option of that entry."""
    if key is None:
        rows = ["| reference key | read by | required options |", "| --- | --- | --- |"]
        for spec in registry.TESTS.values():
            if spec.role != ACCEPTANCE or spec.degraded or spec.filled:
                continue
            need = [n for n, sub in entry_options(spec.key).items() if sub["required"]]
            also = [t.check for t in registry.DEGRADED if t.degraded and t.key == spec.key]
            read_by = ", ".join(f"`{c}`" for c in [spec.check, *also])
            rows.append(f"| `{spec.key}` | {read_by} | {', '.join(need)} |")
        return "\n".join(rows) + "\n"
    rows = [f"`tests.{key}` (* required)", "", "| option | value | what it is |",
            "| --- | --- | --- |"]
    for name, sub in entry_options(key).items():
        rows.append(f"| {name}{' *' if sub['required'] else ''} | {_cell(_kind(sub))} | "
                    f"{_cell(sub.get('description', ''))} |")
    return "\n".join(rows) + "\n"


def probes_table() -> str:
    """One row per server probe fsaccept brings (:data:`fsaccept.core.servers.BUILT_IN`):
    the mount types it answers for, and what it reads."""
    rows = ["| file system | mount types | what the probe reads on every node |",
            "| --- | --- | --- |"]
    for probe in servers.BUILT_IN:
        types = ", ".join(f"`{t}`" for t in probe.fstypes)
        rows.append(f"| {probe.name} | {types} | {_cell(probe.reads)} |")
    return "\n".join(rows) + "\n"


#: The docs' generated sections: ``<!-- BEGIN GENERATED: name -->`` ... ``<!-- END ... -->``.
GENERATED = {"checks": checks_table, "conditions": conditions_table,
             "reference-keys": keys_table,
             "server-probes": probes_table}


def _launch_checks() -> list[str]:
    """The launch check: the preflight checks but the data-reduction probe (it belongs to
    the main session: its figures, not a fault's or a fill's, are the ones a reducible
    pattern skews) and the fill (a fill session's own)."""
    return [t.check for t in registry.TESTS.values()
            if t.role == PREFLIGHT and not {"reduction", "fill"} & set(t.tags)]


def degraded_session_pattern(reference: Any) -> str:
    """A ReFrame ``-n`` pattern for a degraded-mode session of ``reference``: the
    launch check, the healthy tests whose figures the degraded ones are compared
    with, and the degraded-mode tests the file's ``degraded.tests`` lists (their
    fixtures follow); with ``degraded.scenarios``, each scenario's own, by its name
    (``DegradedMdtestEasy %fault_scenario=mds-failover``, a read's
    ``%dataset.fault_scenario=...``).  ValueError when the file has no ``degraded:``
    section."""
    mode = reference.degraded_mode
    if mode is None:
        raise ValueError(f"{reference.path}: degraded: missing (the contract's degraded-mode "
                         "clause; docs/user/degraded.md)")
    checks = [*_launch_checks()] + [
        t.check for t in registry.TESTS.values()
        if t.role == ACCEPTANCE and not t.filled and t.key in mode.all_tests
        and not (mode.scenarios and t.degraded)]
    pattern = "^(" + "|".join(checks) + r")\b"
    if not mode.scenarios:
        return pattern
    # ReFrame matches the display name without its blanks.
    variants = [f"{t.check}%(dataset\\.)?{SCENARIO_PARAMETER}={re.escape(clause.scenario)}"
                for clause in mode.clauses for t in registry.TESTS.values()
                if t.role == ACCEPTANCE and t.degraded and t.key in clause.tests]
    return pattern + "|^(" + "|".join(variants) + r")(?![\w-])"


def main_session_dirs(reference: Any) -> list[str]:
    """The check folders a main session of ``reference`` loads (ReFrame's ``-c``):
    ``checks``, then each opt-in folder ``checks/<dir>`` (the catalogue's ``checks_dir``,
    of a test or of its whole benchmark) whose test a target of the file defines."""
    keys = {key for target in reference.targets for key in target.entries}
    dirs = [t.checks_dir or registry.BENCHMARKS[t.benchmark].checks_dir
            for t in registry.TESTS.values() if t.key in keys and t.benchmark]
    return ["checks"] + [f"checks/{d}" for d in dict.fromkeys(dirs) if d]


def scaling_session_pattern(reference: Any) -> str:
    """A ReFrame ``-n`` pattern for a scaling-sweep session of ``reference``: the
    preflight checks (the data-reduction probe too: a sweep's figures are rates), the
    healthy tests it sweeps (an acceptance test for the sign-off, measured at the full
    placement) and their sweeps' checks (their fixtures follow)."""
    swept = reference.swept_tests(registry.scaling_keys())
    checks = [t.check for t in registry.TESTS.values()
              if (t.role == PREFLIGHT and "fill" not in t.tags)
              or (t.role in (ACCEPTANCE, SCALING) and not t.degraded and not t.filled
                  and t.key in swept)]
    return "^(" + "|".join(checks) + r")\b"


def fill_session_pattern(reference: Any) -> str:
    """A ReFrame ``-n`` pattern for a fill session of ``reference``
    (``scripts/acceptance --fill``): the launch check, the tests ``fill.tests`` names (run
    empty), the filler (``FillTarget``) and their filled re-runs (their fixtures follow).
    ReferenceError, naming the key, when the file does not allow a fill: no ``fill:``,
    ``fill.allowed: false``, or a target not declared ``dedicated``."""
    reference.fill_settings()
    names = fill_tests(reference)
    checks = [*_launch_checks(), *names, registry.FILL_TARGET.check,
              *(FILLED_PREFIX + n for n in names)]
    return "^(" + "|".join(checks) + r")\b"


def fill_generated(text: str, generated: dict[str, Callable[[], str]] | None = None) -> str:
    """``text`` with every generated section made anew from the catalogue (or each of
    ``generated``: ``{name: its maker}``)."""
    for name, make in (GENERATED if generated is None else generated).items():
        pattern = re.compile(rf"(<!-- BEGIN GENERATED: {name} -->\n).*?(<!-- END GENERATED: "
                             rf"{name} -->)", re.S)
        text = pattern.sub(lambda m, make=make: m.group(1) + make() + m.group(2), text)
    return text


if __name__ == "__main__":  # python -m fsaccept.suite.listing FILE...: refill the docs
    for arg in sys.argv[1:]:
        path = Path(arg)
        path.write_text(fill_generated(path.read_text()))
