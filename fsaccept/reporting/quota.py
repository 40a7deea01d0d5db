"""The quota test's rows in the sign-off's "Semantics and features" section: its refusal
and its usage, from its recorded lines (``quota_lines``) judged by the live check's
functions (:mod:`fsaccept.benchmarks.quota`)."""

from __future__ import annotations

from typing import Any

from fsaccept.benchmarks.quota import command as quota_command
from fsaccept.benchmarks.quota import parse as quota_parse
from fsaccept.benchmarks.quota import validity as quota_validity
from fsaccept.core.formatting import format_number
from fsaccept.reporting.caserow import UNVERIFIED, CaseRow, entry_params, selected
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.signoff.common import target_path


def quota_rows(t: Test, key: str, reference: Any) -> list[CaseRow]:
    """The quota test's two rows (its refusal, its usage), from its recorded lines
    (``quota_lines``) judged by the live check's functions."""
    text = t.case.get("quota_lines")
    if not isinstance(text, str) or not text:
        return []
    run = quota_parse.parse_quota(text)
    params = entry_params(t, key, reference, quota_command.parameters)
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
    target_dir, ref = t.case.get("target_dir"), selected(t, reference)
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
