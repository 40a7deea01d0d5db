"""The sign-off's "Scaling" section: each sweep's curve (a swept test along one dimension,
one point per test case), judged by its shape (:func:`fsaccept.core.scaling.judge_curve`)
against the verified reference's ``sweeps:`` section, with a plot per curve (measured,
linear scaling from the smallest point, the efficiency floor, point thresholds) and a
table.

Which cases are a sweep's, of which test and dimension, is the catalogue's (never the
run report's tags); a point's value is the one ReFrame put in the case's name
(``%nodes=4``, ``%dataset.transfer=1MiB``), held against the placement the case
recorded.  A curve that FAILs blocks the sign-off; one that is INCOMPLETE (a point
INVALID or missing, a swept test without a curve) leaves it INCOMPLETE.  A point skipped
for lying beyond what the partition allows ends the curve: it is listed, not missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import SCALING
from fsaccept.core import placement, scaling
from fsaccept.core.formatting import format_number
from fsaccept.core.scaling import CurveVerdict, Point
from fsaccept.reporting.case import Case
from fsaccept.reporting.plotbudget import Plot, PlotBudget
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.verdicts import FAIL, PASS, SKIPPED, spec_of_case

#: ReFrame's parameter of each dimension, as the case's name carries it.
_PARAMETER = {scaling.NODES: "nodes", scaling.RANKS: "ranks", scaling.TRANSFER: "transfer",
              scaling.STRIPE: "stripe"}
#: What the case recorded of its placement, for the dimensions it records.
_RECORDED = {scaling.NODES: "num_nodes", scaling.RANKS: "ranks_per_node"}


@dataclass
class PointLine:
    #: The point (a number; a (count, size) stripe); None: the case's name gives none.
    x: Any
    case: str
    verdict: str
    figure: float | None
    reason: str = ""
    threshold: float | None = None


@dataclass
class Curve:
    """One swept test along one dimension."""

    test: str  # its key under tests:
    check: str
    dimension: str
    figure: str
    unit: str
    points: list[PointLine]
    #: Points skipped for lying beyond what the partition allows (label: reason).
    beyond: list[str]
    min_efficiency: float | None
    judged: CurveVerdict

    @property
    def title(self) -> str:
        over = ("stripe count x stripe size" if self.dimension == scaling.STRIPE
                else self.dimension.replace("_", " "))
        return f"{self.test}: {self.figure} over {over}"

    def cells(self) -> list[dict[str, str]]:
        """One row per point, for the tables."""
        def q(v: float | None) -> str:
            return "—" if v is None else f"{format_number(v)} {self.unit}"
        first = next((p for p in self.points if p.figure and p.verdict in (PASS, FAIL)),
                     None)
        out = []
        shaped = self.dimension in scaling.EFFICIENCY_DIMENSIONS
        for p in self.points:
            linear = (first.figure * p.x / first.x if first is not None and shaped and p.x
                      else None)
            out.append({"point": "?" if p.x is None else scaling.label(self.dimension, p.x),
                        "case": p.case,
                        "figure": q(p.figure), "linear": q(linear),
                        "threshold": q(p.threshold), "verdict": p.verdict,
                        "reason": p.reason or "—"})
        return out

    def summary(self) -> str:
        if self.dimension == scaling.STRIPE:
            return "a matrix: its points side by side, each run valid (no shape expected)"
        if self.dimension not in scaling.EFFICIENCY_DIMENSIONS:
            return "judged by its points' thresholds only (no linear scaling expected)"
        eff = ("—" if self.judged.efficiency is None else f"{self.judged.efficiency:.2f}")
        floor = "" if self.min_efficiency is None else f" (at least {self.min_efficiency:g})"
        return f"efficiency {eff}{floor}"


@dataclass
class ScalingSection:
    curves: list[Curve] = field(default_factory=list)
    #: What the section finds against the sign-off: FAIL lines, and what it cannot verify.
    failures: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.curves or self.incomplete)


def point_of(case: Case, dimension: str) -> Any:
    """The point ReFrame put in a case's name (``%nodes=4``, ``%dataset.nodes=4``,
    ``%stripe=-1x8MiB``); None when it gives none."""
    match = re.search(rf"%(?:\w+\.)?{_PARAMETER[dimension]}=(\S+)", str(case.get("name")))
    if not match:
        return None
    try:
        return scaling._number(match.group(1) if dimension in (scaling.TRANSFER,
                                                               scaling.STRIPE)
                               else int(match.group(1)), dimension)
    except ValueError:
        return None


def swept(test: Test) -> bool:
    """Whether a test is a point of a sweep (the catalogue's record of its class)."""
    spec = spec_of_case(test.case)
    return spec is not None and spec.role == SCALING


def is_beyond(test: Test) -> bool:
    """A sweep's point skipped for lying beyond what the partition allows (its own skip,
    or its dataset's); a node count within the node fraction of the partition it
    recorded never is."""
    said = test.reason or str(test.case.get("skip_reason") or "")
    if not (swept(test) and test.verdict == SKIPPED and (scaling.BEYOND in said
                                                         or scaling.BELOW in said)):
        return False
    spec = spec_of_case(test.case)
    dimension = spec.attrs["sweep_dimension"]
    x, case = point_of(test.case, dimension), test.case
    if scaling.BELOW in said:  # the catalogue's fact, not the report's sentence
        return dimension == scaling.NODES and bool(x) and x < spec.attrs.get("min_nodes", 1)
    total, fraction = case.get("partition_nodes"), case.get("node_fraction")
    if dimension == scaling.NODES and x and isinstance(total, int) and total > 0 \
            and isinstance(fraction, (int, float)) and 0 < fraction <= 1:
        rounding = case.get("node_rounding") if case.get("node_rounding") in ("up", "down") \
            else "up"
        return x > placement.nodes_for_fraction(fraction, total, rounding)
    return True


def scaling_section(tests: list[Test], reference: Any = None) -> ScalingSection:
    """Each sweep's curve from the session's tests, judged (``reference``: the verified
    file, for the points expected, ``min_efficiency`` and point thresholds; None: the
    defaults, and no point thresholds)."""
    if reference is not None and reference.target_name is None:
        reference = None  # several targets: a file with sweeps: has one (its loader's rule)
    sweeps = reference.sweeps if reference is not None else scaling.Sweeps()
    by_check: dict[str, list[Test]] = {}
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is not None and spec.role == SCALING:
            by_check.setdefault(spec.check, []).append(t)
    out = ScalingSection()
    if not by_check:
        return out  # not a scaling session
    for spec in registry.SCALING_TESTS:
        if spec.role != SCALING:
            continue
        swept = (reference.swept_tests(registry.scaling_keys()) if reference is not None
                 else sorted({s.key for s in registry.SCALING_TESTS if s.check in by_check}))
        fstype = reference.target_fstype if reference is not None else None
        if spec.key not in swept or (fstype and not scaling.applies(
                spec.attrs["sweep_dimension"], fstype)):
            continue
        curve = _curve(spec, by_check.get(spec.check, []), sweeps, reference is not None)
        out.curves.append(curve)
        line = f"scaling: {curve.title}: {curve.judged.verdict}"
        why = "; ".join(curve.judged.reasons)
        if curve.judged.verdict == scaling.FAIL:
            out.failures.append(f"{line} ({why})")
        elif curve.judged.verdict == scaling.INCOMPLETE:
            out.incomplete.append(f"{line} ({why})")
    return out


def _curve(spec: Any, tests: list[Test], sweeps: scaling.Sweeps, planned: bool) -> Curve:
    """``planned``: the sweep's points are the verified reference's (each one the run
    report lacks is missing); else only the cases' own."""
    dimension = spec.attrs["sweep_dimension"]
    figure = spec.main_figure
    unit, lines, beyond, seen = "", [], [], set()
    for t in tests:
        x = point_of(t.case, dimension)
        if x is None:
            lines.append(PointLine(None, t.name, t.verdict, None,
                                   "its name gives no point of the sweep"))
            continue
        seen.add(x)
        if is_beyond(t):
            why = t.reason or t.case.get("skip_reason")
            beyond.append(f"{scaling.label(dimension, x)}: {why}")
            continue
        row = next((fr for fr in t.figures if fr.name == figure), None)
        unit = unit or (row.unit if row is not None else "")
        reason = "" if t.verdict in (PASS, FAIL) else f"{t.verdict}: {t.reason or 'no reason'}"
        recorded = t.case.get(_RECORDED.get(dimension, ""), x)
        if reason == "" and recorded != x:
            reason = (f"INVALID: the case recorded {_RECORDED[dimension]} {recorded!r}, not "
                      f"its point {scaling.label(dimension, x)}")
        th = sweeps.threshold(spec.key, dimension, x)
        lines.append(PointLine(x, t.name, t.verdict, row.value if row is not None else None,
                               reason, th.floor if th is not None else None))
    # A point the reference asks for that no case measured (not even skipped).
    for x in sweeps.points[dimension] if planned else ():
        if x not in seen:
            th = sweeps.threshold(spec.key, dimension, x)
            lines.append(PointLine(x, "—", "missing", None, "not in the run report",
                                   th.floor if th is not None else None))
    # Stripe counts in order, -1 (all OSTs) last.
    lines.sort(key=lambda p: (p.x is not None, (p.x[0] % 10**9, p.x[1])
                              if isinstance(p.x, tuple) else p.x or 0))
    floor = sweeps.efficiency_floor(dimension)
    points = [Point(p.x, p.figure, not p.reason, p.reason, p.threshold) for p in lines
              if p.x is not None]
    judged = (scaling.judge_matrix(points) if dimension == scaling.STRIPE
              else scaling.judge_curve(points, floor, dimension, unit))
    if any(p.x is None for p in lines):
        judged = CurveVerdict(scaling.INCOMPLETE if judged.verdict != scaling.FAIL
                              else judged.verdict,
                              judged.reasons + tuple(f"{p.case}: {p.reason}" for p in lines
                                                     if p.x is None), judged.efficiency)
    return Curve(spec.key, spec.check, dimension, figure, unit, lines, beyond, floor, judged)


def drawn(section: ScalingSection, budget: PlotBudget) -> list[tuple[Curve, Plot | None]]:
    """Each curve of the section (:func:`scaling_section`) with its chart through the
    report's plot budget (:func:`curve_plot`), None where none is drawn."""
    return [(c, budget.draw(f"scaling-{c.check}", f"\0{c.check}", c.title,
                            lambda c=c: curve_plot(c)) if budget.drawing else None)
            for c in section.curves]


def curve_plot(curve: Curve) -> bytes | None:
    """The measured curve, linear scaling from its smallest point, the efficiency floor
    (that fraction of linear scaling) and each point's threshold, on log-log axes."""
    from fsaccept.reporting.plots import _drawable, _png, _pyplot

    measured = [(p.x, p.figure) for p in curve.points if p.x is not None
                and _drawable(p.figure) and p.figure > 0 and p.verdict in (PASS, FAIL)]
    if not measured:
        return None
    if curve.dimension == scaling.STRIPE:
        return _matrix_plot(curve, measured)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
    xs = [p.x for p in curve.points if p.x is not None]
    ax.plot(*zip(*measured), "o-", color="#1f77b4", label="measured")
    x0, y0 = measured[0]
    if curve.dimension in scaling.EFFICIENCY_DIMENSIONS:
        ax.plot(xs, [y0 * x / x0 for x in xs], "--", color="grey", label="linear scaling")
        if curve.min_efficiency is not None:
            ax.plot(xs, [y0 * x / x0 * curve.min_efficiency for x in xs], ":",
                    color="#d62728", label=f"{curve.min_efficiency:g} x linear")
    ths = [(p.x, p.threshold) for p in curve.points if p.threshold and _drawable(p.threshold)]
    if ths:
        ax.plot(*zip(*ths), "v", color="#d62728", label="point threshold")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(xs, [scaling.label(curve.dimension, x) for x in xs])
    ax.set_xlabel(curve.dimension.replace("_", " "))
    ax.set_ylabel(curve.unit)
    ax.set_title(f"{curve.title}: {curve.judged.verdict}", fontsize="medium")
    ax.legend(fontsize="small")
    return _png(fig)


def _matrix_plot(curve: Curve, measured: list[tuple[Any, float]]) -> bytes:
    """The stripe matrix: the figure over stripe sizes, one line per stripe count."""
    from fsaccept.core.units import format_size
    from fsaccept.reporting.plots import _png, _pyplot

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
    sizes = sorted({x[1] for x, _ in measured})
    for count in dict.fromkeys(x[0] for x, _ in measured):
        line = sorted((x[1], y) for x, y in measured if x[0] == count)
        ax.plot(*zip(*line), "o-", label=f"{'all' if count == -1 else count} OSTs")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [format_size(s) for s in sizes])
    ax.set_xlabel("stripe size")
    ax.set_ylabel(curve.unit)
    ax.set_title(f"{curve.title}: {curve.judged.verdict}", fontsize="medium")
    ax.legend(fontsize="small")
    return _png(fig)
