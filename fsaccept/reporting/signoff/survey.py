"""The target survey rebuilt from what its job kept (:func:`survey_reasons`): the
program's lines from the job's own output (``survey_lines`` must be them), each target's
figure from its step's fio report (``r<round>-<node>.json``), judged again by the live
check's functions (:mod:`fsaccept.benchmarks.survey.validity`) with the verified
reference's entry: its size and runtime, its spread, the figures, each target's figure
and the slow targets named those the reports give.
"""

from __future__ import annotations

import posixpath
from typing import Any

from fsaccept.benchmarks.catalogue import TestSpec
from fsaccept.benchmarks.survey import command as survey_command
from fsaccept.benchmarks.survey import parse as survey_parse
from fsaccept.benchmarks.survey import validity as survey_validity
from fsaccept.reporting.case import Case
from fsaccept.reporting.signoff.common import (EvidenceMissing, RunFiles, entry_parameters,
                                               figures_agree, program_run)

#: The survey's directory below the test's (``fsaccept.rfm.survey.SUBDIR``).
SUBDIR = "survey"


def survey_reasons(case: Case, spec: TestSpec, reference: Any = None,
                   files: RunFiles | None = None) -> list[str]:
    """The survey rebuilt from the job's output and its steps' fio reports (each read
    once and digested by the manifest), and judged again: INVALID by its rules (a brick
    unplaced, a target not measured, a plan no survey makes, the entry's size and
    runtime); its figures and the slow targets it names those the reports give, with the
    entry's spread, which must be the one recorded."""
    rebuilt = program_run(case, files, "survey_lines", "the target survey",
                          survey_parse.parse_survey, lambda _: [],
                          survey_parse.program_lines)
    if isinstance(rebuilt, list):
        return rebuilt
    job, run = rebuilt
    params, unreadable = entry_parameters(spec, reference, survey_command.parameters)
    if unreadable:
        return [unreadable]
    missing: list[str] = []

    def report(name: str) -> str | None:
        try:
            return files.text(case, name, "a target's fio report")[0]
        except EvidenceMissing as err:
            missing.append(str(err))
            return None

    target_dir = case.get("target_dir")
    directory = (posixpath.join(target_dir, SUBDIR)
                 if isinstance(target_dir, str) and target_dir else None)
    out = [f"its output ({job.path}): {r}" for r in survey_validity.invalid_reasons(
        run, report, params, directory)]
    if missing or out:
        return missing + out
    spread = params.max_spread if params is not None else case.get("max_spread")
    if params is not None and case.get("max_spread") != params.max_spread:
        out.append(f"max_spread is recorded as {case.get('max_spread')}, but the reference "
                   f"file's tests.{spec.key} says {params.max_spread}")
    if isinstance(spread, bool) or not isinstance(spread, (int, float)):
        return out + [f"max_spread {str(spread)[:40]!r} is not a number"]
    values = survey_validity.measured(run, report)[0]
    out += figures_agree(case, survey_command.FIGURES,
                         survey_validity.figures(values, spread), "fio reports")
    # Each target's own figure, which the report's Components section shows.
    given = {t.name: v for t, v in values.items()}
    kept = case.get("target_figures")
    if not isinstance(kept, dict) or set(kept) != set(given) or any(
            isinstance(kept[k], bool) or not isinstance(kept[k], (int, float))
            or abs(kept[k] - v) > 1e-9 * max(1.0, abs(v)) for k, v in given.items()):
        out.append("target_figures are not each target's figure its fio report gives")
    named = "; ".join(survey_validity.failures(values, spread))
    if (case.get("slow_targets_named") or "") != named:
        out.append(f"the slow targets are recorded as {case.get('slow_targets_named')!r}, "
                   f"but its fio reports name {named or 'none'!r}")
    return out
