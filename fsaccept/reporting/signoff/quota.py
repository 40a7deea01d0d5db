"""The quota program's run, rebuilt from the job's own output (``quota_lines`` must be its
lines): :mod:`fsaccept.benchmarks.quota.validity` (with the verified reference's entry,
its lines held to each other, its directory the test's and below the verified target's
path), its figures those the lines give, and its thresholds no looser than the entry's
(:func:`quota_reasons`).
"""

from __future__ import annotations

from typing import Any

from fsaccept.benchmarks.catalogue import TestSpec
from fsaccept.benchmarks.quota import command as quota_command
from fsaccept.benchmarks.quota import parse as quota_parse
from fsaccept.benchmarks.quota import validity as quota_validity
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (RunFiles, entry_parameters, figures_agree,
                                               program_run, target_path)


def quota_reasons(case: Case, spec: TestSpec, reference: Any = None,
                  files: RunFiles | None = None) -> list[str]:
    """The quota program's run rebuilt from the job's own output (``rfm_job.out``, read
    once and digested by the manifest) and judged again by the live check's functions:
    the recorded lines (``quota_lines``) those it prints; INVALID by its rules (with the
    verified reference's entry: its limit, stop and tolerance), its figures those the
    lines give, each threshold no looser than the entry's, and no failure in a test
    recorded as passed."""
    rebuilt = program_run(case, files, "quota_lines", "the quota check",
                          quota_parse.parse_quota, quota_parse.error_findings,
                          quota_parse.program_lines)
    if isinstance(rebuilt, list):
        return rebuilt
    job, run = rebuilt
    params, unreadable = entry_parameters(spec, reference, quota_command.parameters)
    if unreadable:
        return [unreadable]
    target_dir = case.get("target_dir")
    out = [f"its output ({job.path}): {r}" for r in quota_validity.invalid_reasons(
        run, params, quota_command.quota_directory(target_dir)
        if isinstance(target_dir, str) and target_dir else None, target_path(reference))]
    if out:
        return out
    out += figures_agree(case, quota_command.FIGURES, run.figures(),
                          f"output ({job.path})")
    if params is None:
        return out
    by_name = {f.name: f for f in case.figures}
    for name, (value, lower, upper, unit) in quota_command.references(params).items():
        fig = by_name.get(name)
        if fig is None:
            continue
        if lower is not None and (fig.lower_limit is None
                                  or fig.lower_limit < value * (1 + lower) - 1e-9):
            out.append(f"{name}: the reference file says at least {value * (1 + lower):g} "
                       f"{unit}, but the test was judged against "
                       f"{fig.lower_limit if fig.lower_limit is not None else 'nothing'}")
        if fig.upper_limit is None or fig.upper_limit > value * (1 + upper) + 1e-9:
            out.append(f"{name}: the reference file says at most {value * (1 + upper):g} "
                       f"{unit}, but the test was judged against "
                       f"{fig.upper_limit if fig.upper_limit is not None else 'nothing'}")
    failed = quota_validity.failures(run, params)
    if failed and case.get("result") == "pass":
        out.append(f"recorded as passed, but its lines fail: {'; '.join(failed)[:400]}")
    return out
