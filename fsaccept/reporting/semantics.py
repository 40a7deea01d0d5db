"""The sign-off's "Semantics and features" section: each case of each cross-node
semantics test, what was seen, what the verified reference promises, its verdict and
the node pair it was seen on.

Everything is re-read from the test's recorded case lines (``semantics_cases``, the
bytes the manifest hashes) and judged by the live check's functions with the verified
reference's entry (:mod:`fsaccept.benchmarks.semantics`): never from a recorded
verdict or failure list.  A case whose line contradicts itself
(:func:`fsaccept.benchmarks.semantics.validity.consistency_reasons`) is INVALID.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.quota import command as quota_command
from fsaccept.benchmarks.quota import parse as quota_parse
from fsaccept.benchmarks.quota import spec as quota_spec
from fsaccept.benchmarks.quota import validity as quota_validity
from fsaccept.benchmarks.semantics import command, parse, validity
from fsaccept.benchmarks.semantics import spec as semantics_spec
from fsaccept.core.formatting import format_number
from fsaccept.reporting.signoff.common import target_path
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
    params = _params(t, key, reference)
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


def _selected(t: Test, reference: Any) -> Any:
    """The reference with the test's target selected (None: none, or no such target)."""
    try:
        return reference.for_target(target_of(t.case) or "") if reference is not None \
            else None
    except ValueError:
        return None


def _params(t: Test, key: str, reference: Any, of=command.parameters) -> Any:
    ref = _selected(t, reference)
    if ref is None:
        return None
    try:
        entry = ref.entries.get(key)
        return of(key, entry) if isinstance(entry, dict) else None
    except (TypeError, ValueError, KeyError):
        return None


def quota_rows(t: Test, key: str, reference: Any) -> list[CaseRow]:
    """The quota test's two rows (its refusal, its usage), from its recorded lines
    (``quota_lines``) judged by the live check's functions."""
    text = t.case.get("quota_lines")
    if not isinstance(text, str) or not text:
        return []
    run = quota_parse.parse_quota(text)
    params = _params(t, key, reference, quota_command.parameters)
    where = f"node {run.node or '?'}"
    mib = format_number((run.written or 0) / quota_command.MIB)
    refused = (f"EDQUOT after {mib} MiB" if run.stopped == quota_parse.EDQUOT else
               f"no EDQUOT up to {mib} MiB" if run.stopped == quota_parse.STOP else
               f"stopped on {run.stopped or 'nothing'} after {mib} MiB")
    delay = run.usage_delay()
    usage = (f"followed after {format_number(delay)} s" if delay is not None else
             f"did not follow in {format_number(run.usage[-1][0])} s" if run.usage else
             "never read")
    if params is None:
        return [CaseRow(t.name, "quota-enforced", where, refused, UNVERIFIED, "—"),
                CaseRow(t.name, "quota-usage", where, usage, UNVERIFIED, "—")]
    target_dir, ref = t.case.get("target_dir"), _selected(t, reference)
    if quota_validity.invalid_reasons(run, params, quota_command.quota_directory(target_dir)
                                      if isinstance(target_dir, str) and target_dir
                                      else None, target_path(ref)):
        return [CaseRow(t.name, c, where, seen, promise, "INVALID") for c, seen, promise in (
            ("quota-enforced", refused, _refusal_promise(params)),
            ("quota-usage", usage, f"≤ {format_number(params.usage_within_s)} s"))]
    failed = quota_validity.failures(run, params)
    bad_usage = any(f.startswith("the usage reported") for f in failed)
    return [CaseRow(t.name, "quota-enforced", where, refused, _refusal_promise(params),
                    "FAIL" if len(failed) > bad_usage else "PASS"),
            CaseRow(t.name, "quota-usage", where, usage,
                    f"≤ {format_number(params.usage_within_s)} s",
                    "FAIL" if bad_usage else "PASS")]


def _refusal_promise(p: quota_command.QuotaParameters) -> str:
    return f"EDQUOT within {p.slack_mib} MiB of {p.limit_mib} MiB"


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
