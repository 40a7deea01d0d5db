"""The target survey's INVALID rules, its figures and its failures.  The live check and
the sign-off call the same functions, on the program's lines and fio's reports parsed
from the same bytes."""

from __future__ import annotations

import statistics
from collections.abc import Callable

from fsaccept.benchmarks.survey import command
from fsaccept.benchmarks.survey.parse import FORMAT, SurveyRun, target_figure
from fsaccept.core import components
from fsaccept.core.components import Target

#: Reads a step's kept fio report by its file name (None: not there).
Reports = Callable[[str], "str | None"]


def measured(run: SurveyRun, reports: Reports) -> tuple[dict[Target, float], list[str]]:
    """Each target's figure from its own fio report, and the targets not measured."""
    values, not_measured = {}, []
    for step in run.steps:
        value, why = target_figure(reports(step.report) if step.report else None, step.exit)
        if value is None:
            not_measured.append(f"target {step.target.name} (on {step.node}): not "
                                f"measured ({why})")
        else:
            values[step.target] = value
    return values, not_measured


def invalid_reasons(run: SurveyRun, reports: Reports,
                    p: command.SurveyParameters | None = None,
                    directory: str | None = None) -> list[str]:
    """INVALID reasons; none: the figures may be judged.  A survey that saw only part of
    the volume (a brick unplaced, a target not measured) judges nothing."""
    reasons = list(run.reasons)
    if run.version is None:
        return reasons
    if run.version != FORMAT:
        reasons.append(f"survey output format {run.version}, not {FORMAT}")
    if p is not None and (run.size, run.runtime_s) != (p.size, p.runtime_s):
        reasons.append(f"the survey wrote {run.size} bytes for {run.runtime_s} s per target, "
                       f"not the entry's {p.size} bytes for {p.runtime_s} s")
    if directory is not None and run.directory != directory:
        reasons.append(f"the survey ran in {run.directory}, not in the test's directory "
                       f"{directory}")
    reasons += [f"brick {b}: no file could be placed on it" for b in run.unplaced]
    if not run.steps:
        reasons.append("the survey measured no target")
    if run.bricks is not None and len({b for s in run.steps
                                       for b in s.target.name.split(",")}) \
            + len(run.unplaced) != run.bricks:
        reasons.append(f"the client lists {run.bricks} bricks, but the survey's targets and "
                       "unplaced bricks do not add up to them")
    reasons += plan_reasons(run)
    reasons += measured(run, reports)[1]
    return reasons


def plan_reasons(run: SurveyRun) -> list[str]:
    """A plan no survey makes: a round where a node measures two targets, or a server
    serves two, or a node outside the job's."""
    out = []
    by_round: dict[int, list] = {}
    for s in run.steps:
        by_round.setdefault(s.round, []).append(s)
        if run.nodes and s.node not in run.nodes:
            out.append(f"target {s.target.name} was measured on {s.node}, not a node of "
                       f"the survey ({','.join(run.nodes)})")
    for r, steps in sorted(by_round.items()):
        servers = [s.target.server for s in steps]
        if len(set(servers)) != len(servers) or len({s.node for s in steps}) != len(steps):
            out.append(f"round {r} measured two targets of one server, or two on one node: "
                       "its figures are not each target's own")
    return out


def figures(values: dict[Target, float], max_spread: float) -> dict[str, float]:
    """The slowest target, the median target, and the slow targets' count."""
    if not values:
        return {}
    return {command.MIN: min(values.values()),
            command.MEDIAN: statistics.median(values.values()),
            command.SLOW: float(len(components.slow_targets(values, max_spread)))}


def failures(values: dict[Target, float], max_spread: float) -> list[str]:
    """Each slow target, named with its server."""
    return [f"slow target: {s.describe('write', 'MiB/s')}, below {1 - max_spread:.2f} x "
            "the median" for s in components.slow_targets(values, max_spread)]
