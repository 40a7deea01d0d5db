"""The sign-off's "Components" section: each storage target the survey measured, one row
each, with its server, the node and round that measured it, its figure and its share of
the median target; the slow ones FAIL, named.

The rows come from the survey's recorded lines (``survey_lines``: the plan) and each
target's recorded figure (``target_figures``).  The sign-off holds both to the job's own
output and to each target's fio report (:mod:`fsaccept.reporting.signoff.survey`): a
case whose records disagree with them is INVALID, and so is each of its rows.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from fsaccept.benchmarks.survey import command as survey_command
from fsaccept.benchmarks.survey import parse as survey_parse
from fsaccept.benchmarks.survey import spec as survey_spec
from fsaccept.core import components
from fsaccept.core.formatting import format_number
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.verdicts import FAIL, INVALID, PASS, spec_of_case


@dataclass(frozen=True)
class TargetRow:
    """One target of one survey test, as the section shows it."""

    test: str
    target: str
    server: str
    node: str
    round: int
    measured: str     #: "181.82 MiB/s", or "—" (not measured)
    of_median: str    #: "0.86 x", or "—"
    limit: str        #: "≥ 0.30 x": below it, the target is slow
    verdict: str


def components_section(tests: list[Test], reference: Any = None) -> list[TargetRow]:
    """A row per target of each survey test that recorded its plan (none: no section)."""
    rows: list[TargetRow] = []
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is not None and spec.benchmark == survey_spec.BENCHMARK.name:
            rows += survey_rows(t)
    return rows


def survey_rows(t: Test) -> list[TargetRow]:
    """The rows of one survey test: its recorded plan, each target's recorded figure, the
    slow ones by the spread the test recorded (the sign-off holds it to the reference)."""
    text = t.case.get("survey_lines")
    if not isinstance(text, str) or not text:
        return []
    run = survey_parse.parse_survey(text)
    kept = t.case.get("target_figures")
    kept = kept if isinstance(kept, dict) else {}
    values = {s.target: float(kept[s.target.name]) for s in run.steps
              if isinstance(kept.get(s.target.name), (int, float))
              and not isinstance(kept.get(s.target.name), bool)}
    spread = t.case.get("max_spread")
    spread = spread if isinstance(spread, (int, float)) and 0 <= spread < 1 \
        else components.DEFAULT_MAX_SPREAD
    slow = {s.target for s in components.slow_targets(values, spread)} if values else set()
    median = statistics.median(values.values()) if values else None
    unit = survey_command.FIGURES[survey_command.MEDIAN]
    rows = []
    for step in run.steps:
        value = values.get(step.target)
        verdict = (INVALID if t.verdict == INVALID or value is None else
                   FAIL if step.target in slow else PASS)
        rows.append(TargetRow(
            t.name, step.target.name, step.target.server, step.node, step.round,
            f"{format_number(value)} {unit}" if value is not None else "—",
            f"{value / median:.2f} x" if value is not None and median else "—",
            f"≥ {1 - spread:.2f} x", verdict))
    return rows
