"""The sign-off's "Semantics and features" section: each case of each cross-node
semantics test, what was seen, what the verified reference promises, its verdict and
the node pair it was seen on.

Everything is re-read from the test's recorded case lines (``semantics_cases``, the
bytes the manifest hashes) and judged by the live check's functions with the verified
reference's entry (:mod:`fsaccept.benchmarks.semantics`): never from a recorded
verdict or failure list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.semantics import command, parse, validity
from fsaccept.core.formatting import format_number
from fsaccept.reporting.runreport import Test, target_of
from fsaccept.reporting.verdicts import spec_of_case

#: What a case's row says when the sign-off has no verified reference to judge it by.
UNVERIFIED = "not verified (no verified reference)"


@dataclass(frozen=True)
class CaseRow:
    """One case of one test."""

    test: str
    case: str
    pair: str
    seen: str
    promise: str
    verdict: str


def semantics_section(tests: list[Test], reference: Any = None) -> list[CaseRow]:
    """A row per case of each semantics test that recorded its case lines (none: no
    section)."""
    rows = []
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is None or spec.benchmark != "semantics":
            continue
        text = t.case.get("semantics_cases")
        if not isinstance(text, str) or not text:
            continue
        run = parse.parse_case_lines(text)
        params = _params(t, spec.key, reference)
        limits = command.thresholds(params) if params is not None else {}
        failed = {f.split(":", 1)[0] for f in validity.failures(run, params)} \
            if params is not None else set()
        for case in run.cases.values():
            rows.append(_row(t.name, case, params, limits, failed))
    return rows


def _params(t: Test, key: str, reference: Any) -> command.SemanticsParameters | None:
    if reference is None:
        return None
    try:
        entry = reference.for_target(target_of(t.case) or "").entries.get(key)
        return command.parameters(key, entry) if isinstance(entry, dict) else None
    except (TypeError, ValueError, KeyError):
        return None


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
