"""The sign-off's "Semantics and features" section: each case of each cross-node
semantics test, what was seen, what the verified reference promises, its verdict and
the node pair it was seen on.

Everything is re-read from the test's recorded case lines (``semantics_cases``, the
bytes the manifest hashes) and judged by the live check's functions with the verified
reference's entry (:mod:`fsaccept.benchmarks.semantics`): never from a recorded
verdict or failure list.  A case whose line contradicts itself
(:func:`fsaccept.benchmarks.semantics.validity.consistency_reasons`) is INVALID.  The
quota test's rows are its own module's (:mod:`fsaccept.reporting.quota`), each
benchmark's rows found by its record (:data:`ROWS`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fsaccept.benchmarks.quota import spec as quota_spec
from fsaccept.benchmarks.semantics import command, parse, validity
from fsaccept.benchmarks.semantics import spec as semantics_spec
from fsaccept.core.formatting import format_number
from fsaccept.reporting.caserow import UNVERIFIED, CaseRow, entry_params
from fsaccept.reporting.quota import quota_rows
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.verdicts import spec_of_case


def semantics_section(tests: list[Test], reference: Any = None) -> list[CaseRow]:
    """A row per case of each semantics test that recorded its case lines (none: no
    section)."""
    rows = []
    for t in tests:
        spec = spec_of_case(t.case)
        of = ROWS.get(spec.benchmark) if spec is not None else None
        if of is not None:
            rows += of(t, spec.key, reference)
    return rows


def semantics_rows(t: Test, key: str, reference: Any) -> list[CaseRow]:
    """A semantics test's rows, one per case of its recorded case lines
    (``semantics_cases``)."""
    text = t.case.get("semantics_cases")
    if not isinstance(text, str) or not text:
        return []
    run = parse.parse_case_lines(text)
    params = entry_params(t, key, reference, command.parameters)
    limits = command.thresholds(params) if params is not None else {}
    failed = {f.split(":", 1)[0] for f in validity.failures(run, params)} \
        if params is not None else set()
    contradicted = {r.split(":", 1)[0] for r in validity.consistency_reasons(run)}
    rows = []
    for case in run.cases.values():
        row = _row(t.name, case, params, limits, failed)
        if params is not None and case.name in contradicted:
            row = dataclasses.replace(row, verdict="INVALID")
        rows.append(row)
    return rows


#: Each benchmark's rows in the section, by its record's name (a test of any other
#: benchmark has none).
ROWS = {semantics_spec.BENCHMARK.name: semantics_rows, quota_spec.BENCHMARK.name: quota_rows}


def _row(test: str, case: parse.CaseResult, params: command.SemanticsParameters | None,
         limits: dict[str, tuple], failed: set[str]) -> CaseRow:
    unit = "s" if case.unit == parse.SECONDS else case.unit
    seen = (f"{format_number(case.value)} {unit}" if case.supported
            else f"not supported ({case.detail})")
    if case.name == "visibility" and case.p50 is not None:
        seen += f" (p50 {format_number(case.p50)} s)"
    if case.wrong is not None:
        seen += f" ({format_number(case.wrong)} wrong entries)"
    if params is None:
        return CaseRow(test, case.name, case.pair, seen, UNVERIFIED, "—")
    if not command.promised(params, case.name):
        return CaseRow(test, case.name, case.pair, seen,
                       f"not promised: {params.not_promised[case.name]}", "not promised")
    limit = limits.get(parse.figure_of(case.name))
    words = command.promise_words(params, case.name)
    if words is not None:
        promise = words
    elif limit is None:
        promise = "supported"
    elif case.unit == parse.RATE:
        promise = f"≥ {format_number(limit[0])} {unit}, every entry listed"
    else:
        promise = f"≤ {format_number(limit[0])} {unit}"
    return CaseRow(test, case.name, case.pair, seen, promise,
                   "FAIL" if case.name in failed else "PASS")
