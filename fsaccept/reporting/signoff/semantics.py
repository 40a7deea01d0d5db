"""The semantics program's case lines, parsed again from the job's own ``rfm_job.out``
(:func:`semantics_rebuilt`; ``semantics_cases`` must be what they give, as printed, or as
an older check recorded them, by ``repr``): each figure the value its line gives, each
delay's ceiling no looser than the verified reference's ``max_visibility_s``, and a case
that fails by :func:`fsaccept.benchmarks.semantics.validity.failures` never in a passed
test (:func:`semantics_reasons`).
"""

from __future__ import annotations

from typing import Any

from fsaccept.benchmarks.catalogue import TestSpec
from fsaccept.benchmarks.semantics import command as semantics_command
from fsaccept.benchmarks.semantics import parse as semantics_parse
from fsaccept.benchmarks.semantics import validity as semantics_validity
from fsaccept.core import inputs, joboutput
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import EvidenceMissing, RunFiles


def semantics_rebuilt(case: Case, files: RunFiles | None
                      ) -> tuple[semantics_parse.SemanticsRun, str]:
    """(the semantics program's run its job's output says, parsed as the live check
    parsed it: :func:`fsaccept.benchmarks.semantics.parse.parse_semantics` of the
    counted stdout, with its stderr's findings; where it was read).  EvidenceMissing
    when the job's output cannot be read."""
    if files is None:
        raise EvidenceMissing(f"evidence missing: {joboutput.JOB_STDOUT}: the run directory "
                              "was not read")
    read, path = files.lines(case, joboutput.JOB_STDOUT, "a job's output")
    err, _ = files.text(case, joboutput.JOB_STDERR, "a job's error output")
    try:  # its output read line by line (twice: joboutput.counted_stdout_lines)
        info = joboutput.job_info(read())
        stderr = joboutput.benchmark_stderr(info, joboutput.counted_stderr(err))
        return joboutput.parsed(semantics_parse.parse_semantics,
                                semantics_parse.error_findings,
                                joboutput.counted_stdout_lines(read), stderr), path
    except inputs.InputError as why:
        raise EvidenceMissing(f"evidence missing: {str(why)[:300]}") from None


def semantics_reasons(case: Case, spec: TestSpec, reference: Any = None,
                      files: RunFiles | None = None) -> list[str]:
    """The semantics program's run rebuilt from the job's own output (``rfm_job.out``,
    read once and digested by the manifest), by the live check's functions, and judged
    again: the recorded case lines (``semantics_cases``) those it prints; its figures
    those the lines give; with the verified reference, the live check's INVALID reasons
    beyond those the case says, each delay's ceiling its ``max_visibility_s`` and each
    rate's floor its ``min_*_rate`` (no looser), and no failed case in a test recorded
    as passed."""
    text = case.get("semantics_cases")
    if not isinstance(text, str) or not text:
        return ["evidence missing: no semantics_cases, which the semantics check records"]
    try:
        run, where = semantics_rebuilt(case, files)
    except EvidenceMissing as err:
        return [str(err)]
    out = []
    if text not in (run.case_lines(), run.repr_case_lines()):  # the latter: older runs
        out.append(f"its semantics_cases are not what its output {where} says")
    if not run.cases:
        return out + [f"its output {where} holds no case line of the semantics program: "
                      f"{'; '.join(run.reasons)[:300]}"]
    given = run.figures()
    for fig in case.figures:
        value = given.get(fig.name)
        if fig.value is not None and (value is None or abs(fig.value - value) > 1e-9):
            out.append(f"{fig.name} is recorded as {fig.value}, but its output ({where}) "
                       f"gives {value if value is not None else 'none'}")
    # Lines that contradict each other, whatever the reference and the case say.
    contradicted = semantics_validity.consistency_reasons(run)
    entry = getattr(reference, "entries", {}).get(spec.key) if reference is not None else None
    if not isinstance(entry, dict):
        if not run.valid and case.get("result") == "pass":
            out.append(f"recorded as passed, but its output ({where}) is not a whole run: "
                       f"{'; '.join(run.reasons)[:300]}")
        return out + [f"its output ({where}): {r}" for r in contradicted]
    try:
        params = semantics_command.parameters(spec.key, entry)
    except (TypeError, ValueError) as err:
        return out + [f"tests.{spec.key} cannot be read: {str(err)[:200]}"]
    tasks = case.get("num_tasks")
    said = str(case.get("invalid_reasons") or "")
    if isinstance(tasks, int) and not isinstance(tasks, bool):
        out += [r for r in semantics_validity.invalid_reasons(
            run, semantics_validity.expectation(params, tasks)) if r not in said]
    else:
        out += [r for r in run.reasons + contradicted if r not in said]
    by_name = {f.name: f for f in case.figures}
    for name, (value, lower, upper, unit) in semantics_command.thresholds(params).items():
        fig = by_name.get(name)
        if fig is None:
            continue
        if lower is not None:  # a floor (a namespace case's rate)
            if fig.lower_limit is None or fig.lower_limit < value * (1 + lower):
                out.append(f"{name}: the reference file says at least {value:g} {unit}, but "
                           "the test was judged against "
                           f"{fig.lower_limit if fig.lower_limit is not None else 'nothing'}")
        elif fig.upper_limit is None or fig.upper_limit > value * (1 + (upper or 0)):
            out.append(f"{name}: the reference file says at most {value:g} {unit}, but the "
                       "test was judged against "
                       f"{fig.upper_limit if fig.upper_limit is not None else 'nothing'}")
    failed = semantics_validity.failures(run, params)
    if failed and case.get("result") == "pass":
        out.append(f"recorded as passed, but its case lines fail: {'; '.join(failed)[:400]}")
    return out
