"""Figures and verdicts of one ReFrame test case, from ReFrame's own run report.

The figures are ReFrame's performance values (``perfvalues``: value, reference,
lower, upper, unit, result), so a new check needs no change here.  Verdicts, per
test case (:func:`verdict_of`):

- PASS: ReFrame's ``pass``;
- FAIL: failed in the ``performance`` phase (a figure below its threshold);
- INVALID: failed in ``sanity`` with ``INVALID:`` in the reason (the text
  after it is the reason shown), a figure no file system can have, figures
  that contradict the verdict recorded with them or were not judged
  (:func:`unjudgeable_figures`), or a pass that carries a failure reason
  (:func:`recorded_failure`); what a test depends on (its fixtures, the reference
  file's thresholds) is checked in :func:`fsaccept.reporting.runreport.tests_of`;
- anything else is shown as what it is (ERROR in a phase, SKIPPED, NOT RUN
  because a dependency failed, ABORTED) and is never PASS.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import ACCEPTANCE, FIXTURE, ROLES, TestSpec
from fsaccept.core.findings import figure_problem
from fsaccept.core.formatting import format_number, format_quantity, unit_scale
from fsaccept.core.pernode import OUTLIER_FIGURE
# The case typed at the door; Figure, as_number and RunReportError are named here too.
from fsaccept.reporting.case import Case, Figure, RunReportError, as_number  # noqa: F401

PASS, FAIL, INVALID = "PASS", "FAIL", "INVALID"
ERROR, SKIPPED, NOT_RUN, ABORTED = "ERROR", "SKIPPED", "NOT RUN", "ABORTED"
#: Worst first: a repeated test takes the first of these that any run has.
VERDICT_ORDER = (ERROR, ABORTED, INVALID, FAIL, NOT_RUN, SKIPPED, PASS)
ACCEPTED, NOT_ACCEPTED, INCOMPLETE = "ACCEPTED", "NOT ACCEPTED", "INCOMPLETE"
#: The tag of an acceptance test (the catalogue's role ``acceptance``): a sign-off needs
#: at least one (a pre-flight check alone is not one).
ACCEPTANCE_TAG = ACCEPTANCE

#: ``--repeat N`` adds this parameter to each test's name.
REPEAT_PARAM = re.compile(r"\s+%\.?repeat_no=\d+")

# --------------------------------------------------------------------------- figures


def figures_of(case: Case) -> list[Figure]:
    """The figures of a run-report test case, in the order the check declared them
    (typed once, at the door: :func:`fsaccept.reporting.case.typed`)."""
    return list(case.figures)


def format_threshold(fig: Figure) -> str:
    """'≥ 45 MiB/s (50 − 10 %)'; '—' for a figure without threshold."""
    if not fig.judged:
        return "—"
    # One unit for the limit and the reference it comes from: '≤ 110 µs (100 + 10 %)'.
    factor, unit = unit_scale(fig.reference, fig.unit)

    def q(v: float | None) -> str:
        return format_quantity(v, fig.unit, factor, unit)
    parts = []
    if fig.lower_limit is not None:
        tol = f" − {format_number(round(-fig.lower * 100, 6))} %" if fig.lower else ""
        parts.append(f"≥ {q(fig.lower_limit)} ({format_number(_scaled(fig.reference, factor))}"
                     f"{tol})")
    if fig.upper_limit is not None:
        tol = f" + {format_number(round(fig.upper * 100, 6))} %" if fig.upper else ""
        parts.append(f"≤ {q(fig.upper_limit)} ({format_number(_scaled(fig.reference, factor))}"
                     f"{tol})")
    if not parts:
        parts.append(q(fig.reference))
    return ", ".join(parts)


def _scaled(value: float | None, factor: Decimal) -> Any:
    if value is None or factor == 1:
        return value
    return Decimal(repr(value)) * factor


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str = ""


def invalid_reason(fail_reason: str | None) -> str | None:
    """The text after ``INVALID:`` in a ReFrame fail reason, or None."""
    if not fail_reason or "INVALID:" not in fail_reason:
        return None
    return fail_reason.split("INVALID:", 1)[1].strip()


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def figure_failures(figures: list[Figure]) -> list[str]:
    """'write_bandwidth 1,987.01 MiB/s < 900,000 MiB/s' for each figure ReFrame failed."""
    out = []
    for f in figures:
        if f.result != "fail":
            continue
        if f.lower_limit is not None and f.value is not None and f.value < f.lower_limit:
            out.append(f"{f.name} {format_quantity(f.value, f.unit)} below the threshold "
                       f"{format_quantity(f.lower_limit, f.unit)}")
        elif f.upper_limit is not None and f.value is not None and f.value > f.upper_limit:
            out.append(f"{f.name} {format_quantity(f.value, f.unit)} above the limit "
                       f"{format_quantity(f.upper_limit, f.unit)}")
        else:
            out.append(f"{f.name} {format_quantity(f.value, f.unit)} failed its reference")
    return out


#: Units of counts, which may be 0 (``outlier_nodes``, ``incorrect_transfers``, the
#: semantics check's violations); every
#: other figure is a rate or a
#: time, which a test that did I/O cannot measure as 0.
COUNT_UNITS = frozenset({"nodes", "transfers", "violations", "targets", "links", ""})


def bogus_figures(figures: list[Figure], may_be_zero: tuple[str, ...] = ()) -> list[str]:
    """'write_bandwidth -1987.01 MiB/s is negative' for each figure that cannot have
    been measured (not finite, negative, 0 for a rate or a time unless the test's record
    says 0 is a measurement, ``may_be_zero``): never PASS or FAIL."""
    out = []
    for f in figures:
        if f.value is None:
            continue
        why = figure_problem(f.value, io_done=f.unit not in COUNT_UNITS
                             and f.name not in may_be_zero)
        if why:
            out.append(f"{f.name} {f.value!r} {f.unit}: {why}, not a measurement")
    return out


def spec_of_case(testcase: Case) -> TestSpec | None:
    """The catalogue's record of a run-report test case, by its class (the name up to its
    first blank), or None for a test fsaccept does not know."""
    return registry.TESTS.get(registry.class_of_case(testcase.get("name")))


def is_acceptance(testcase: Case) -> bool:
    """Whether a test case is an acceptance test: its class's record says so, never its
    recorded tags (an edited run report can re-tag it); a test the catalogue does not know
    goes by its tags (the sign-off refuses it anyway: :func:`identity_problems`)."""
    spec = spec_of_case(testcase)
    if spec is None:
        return ACCEPTANCE_TAG in testcase.tags
    return spec.role == ACCEPTANCE


def identity_problems(testcase: Case) -> list[str]:
    """What in a test case contradicts the catalogue's record of its class: a class it does
    not know, a unique name of another class, a fixture flag, reference key or tags that
    are not its class's, a figure its class does not report.  A live run never writes
    these; an edited run report can."""
    name = testcase.get("name")
    spec = spec_of_case(testcase)
    if spec is None:
        return [f"{str(name)[:100]!r} is not a test of fsaccept's catalogue: it cannot be "
                "judged (a site's own check needs a record in its benchmark's spec.py)"]
    out = []
    unique = testcase.get("unique_name")
    if isinstance(unique, str) and unique != spec.check and not unique.startswith(
            spec.check + "_"):
        out.append(f"its unique name {unique[:100]!r} is not one of {spec.check}'s")
    if bool(testcase.get("fixture")) != (spec.role == FIXTURE):
        out.append(f"recorded as {'a fixture' if testcase.get('fixture') else 'a test'}, "
                   f"but {spec.check} is {'a fixture' if spec.role == FIXTURE else 'a test'}")
    key = testcase.get("reference_key")
    if key not in (None, "<undefined>") and key != spec.key:
        out.append(f"recorded reference_key {str(key)[:100]!r}, but {spec.check} reads "
                   f"tests.{spec.key or '(none)'}")
    tags = testcase.get("tags")
    if tags is not None:
        # A site may add tags of its own (nightly...), never drop its class's or claim
        # another role.
        have = set(map(str, tags)) if isinstance(tags, list) else set()
        if (spec.all_tags - have) or (have & set(ROLES)) - spec.all_tags:
            out.append(f"recorded tags {str(tags)[:100]}, but {spec.check}'s are "
                       f"{sorted(spec.all_tags)}")
    for figure in (f.name for f in testcase.figures):
        if not spec.reports(figure):
            out.append(f"figure {figure[:100]!r} is not one {spec.check} reports")
    return out


def unjudgeable_figures(testcase: Case, figures: list[Figure]) -> list[str]:
    """What in a run report's figures contradicts its own verdict, or cannot have been
    judged: a threshold that is not a number (or a tolerance without the figure it applies
    to), a judged figure without a value, a value outside the limits it passed, a figure
    failed inside a test passed, an acceptance test without any figure or without any
    figure compared with a limit.  A live run never writes these; an edited or damaged
    run report can, and its test is then INVALID, never PASS or ACCEPTED."""
    out = []
    acceptance = is_acceptance(testcase)
    if not figures and acceptance:
        out.append("no figure recorded for an acceptance test")
    unusable = False
    for f in figures:
        # Tolerances (lower, upper) are signed fractions; the reference is a figure.
        tolerances = [x for x in (f.lower, f.upper) if x is not None]
        if (f.bad_threshold
                or (f.reference is not None and figure_problem(f.reference, io_done=False))
                or (f.reference is None and tolerances)
                or any(not math.isfinite(x) for x in tolerances)):
            out.append(f"{f.name}: threshold {f.reference!r} ({f.lower!r}, {f.upper!r}) is "
                       "not a usable threshold")
            unusable = True
            continue
        if f.judged and f.value is None:
            out.append(f"{f.name}: judged against a threshold but no value recorded")
            continue
        if f.value is None or figure_problem(f.value, io_done=False):
            continue  # bogus_figures says why
        outside = ((f.lower_limit is not None and f.value < f.lower_limit)
                   or (f.upper_limit is not None and f.value > f.upper_limit))
        if outside and f.result != "fail":
            out.append(f"{f.name} {format_quantity(f.value, f.unit)} is outside its threshold "
                       f"but recorded as {f.result or 'not judged'}")
        if f.result == "fail" and testcase.get("result") == "pass":
            out.append(f"{f.name} failed its reference in a test recorded as passed")
    # The slow-node count is a check of the nodes, not of the file system's figures: an
    # acceptance test passes only on a figure compared with a threshold.
    if (acceptance and figures and not unusable
            and not any(f.limited for f in figures if f.name != OUTLIER_FIGURE)):
        out.append("no figure was judged against a threshold ("
                   + ", ".join(f.name for f in figures) + "): nothing to accept")
    return out


#: A skip without a recorded reason (a run report from before fixtures' reasons were
#: passed on: the test list then says which fixture skipped and why).
SKIPPED_BY_REFRAME = "skipped by ReFrame (see ReFrame's output)"


def recorded_failure(testcase: Case) -> str:
    """A reason a test case recorded as ``pass`` carries nonetheless (a failure reason or
    phase, the check's own ``invalid_reasons``): '' when there is none."""
    parts = [str(testcase.get(k)) for k in ("fail_phase", "fail_reason", "invalid_reasons")
             if testcase.get(k) not in (None, "", [], {})]
    return "; ".join(parts)


def verdict_of(testcase: Case) -> Verdict:
    """PASS, FAIL, INVALID, or what else happened, with the reason (one line
    unless it is an INVALID reason, which is kept whole). A run report that carries a
    figure no benchmark can measure (NaN, negative...) makes its test INVALID."""
    result = testcase.get("result")
    phase = testcase.get("fail_phase")
    reason = testcase.get("fail_reason")
    figures = list(testcase.figures)
    if result == "pass" or (result == "fail" and phase == "performance"):
        spec = spec_of_case(testcase)
        bogus = bogus_figures(figures, spec.may_be_zero if spec is not None else ()) \
            + unjudgeable_figures(testcase, figures)
        if bogus:
            return Verdict(INVALID, "; ".join(bogus))
    if result == "pass":
        carried = recorded_failure(testcase)
        if carried:
            reason = invalid_reason(carried)
            return Verdict(INVALID, reason if reason is not None else
                           f"recorded as passed but carries a failure: {carried}")
        return Verdict(PASS)
    if result == "fail" and phase == "performance":
        failed = figure_failures(figures)
        # What a failed count names (its catalogue record's ``named_by``: the slow
        # targets with their servers), said with it.
        spec = spec_of_case(testcase)
        named = [str(testcase.get(var)) for fig, var in (spec.named_by if spec else {}).items()
                 if testcase.get(var) and any(f.name == fig and f.result == "fail"
                                              for f in figures)]
        return Verdict(FAIL, "; ".join(failed + named) or _first_line(reason))
    if result == "fail" and phase == "sanity" and invalid_reason(reason) is not None:
        return Verdict(INVALID, invalid_reason(reason) or "")
    if result == "fail":
        return Verdict(ERROR, f"failed in {phase or 'an unknown phase'}: {_first_line(reason)}"
                       .rstrip(": "))
    if result == "fail_deps":
        return Verdict(NOT_RUN, "a test it depends on did not pass")
    if result == "skip":
        # fsaccept's checks keep their skip reason in a loggable variable (ReFrame's
        # run report has none for skipped tests).
        return Verdict(SKIPPED, _first_line(testcase.get("skip_reason") or reason or "")
                       or SKIPPED_BY_REFRAME)
    if result == "abort":
        return Verdict(ABORTED, f"aborted in {phase or 'an unknown phase'}"
                       + (f": {_first_line(reason)}" if reason else ""))
    return Verdict(ERROR, f"ReFrame result {result!r}")


def worst(verdicts: list[str]) -> str:
    for v in VERDICT_ORDER:
        if v in verdicts:
            return v
    return ERROR
