"""The sign-off's "Degraded mode" section: each figure measured while a storage server
was down beside its healthy counterpart (measured in the same session, else the healthy
threshold), the fraction it reached against the contract's, and each fault's times to
detect, to fail over and to recover, with a timeline plot.  With named fault scenarios
(``fault_scenario``), each scenario has its part: its clause, its figures, its faults.

Which tests are degraded-mode tests, and which healthy test each is compared with, is
the catalogue's (never the run report's tags); the times are re-read from each test's
recorded fault timeline by the functions the live check used
(:mod:`fsaccept.core.degraded`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fsaccept.core import degraded
from fsaccept.core.formatting import format_number
from fsaccept.core.reference import TIME_UNITS, ReferenceError
from fsaccept.reporting.plotbudget import Plot, PlotBudget
from fsaccept.reporting.plots import timeline_plot
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.verdicts import spec_of_case


@dataclass(frozen=True)
class FigureLine:
    """One degraded-mode figure against its healthy counterpart."""

    test: str
    figure: str
    unit: str
    degraded: float | None
    healthy: float | None
    #: "measured" (the healthy test of this session) or "threshold" (none ran).
    healthy_from: str
    contract: float | None
    verdict: str

    @property
    def reached(self) -> float | None:
        """The fraction of the healthy figure reached (a time: healthy / degraded)."""
        if not self.degraded or not self.healthy:
            return None
        ratio = (self.healthy / self.degraded if self.unit in TIME_UNITS
                 else self.degraded / self.healthy)
        return ratio

    def cells(self) -> dict[str, str]:
        def q(v: float | None) -> str:
            return "—" if v is None else f"{format_number(v)} {self.unit}"
        return {"test": self.test, "figure": self.figure, "degraded": q(self.degraded),
                "healthy": q(self.healthy) + (" (threshold)" if self.healthy_from ==
                                              "threshold" and self.healthy is not None else ""),
                "reached": "—" if self.reached is None else f"{self.reached:.0%}" + (
                    " (below the contract)" if self.contract is not None
                    and self.healthy_from == "measured" and self.reached < self.contract
                    else ""),
                "contract": "—" if self.contract is None else f"{self.contract:.0%}",
                "verdict": self.verdict}


@dataclass(frozen=True)
class FaultLine:
    """One test's fault: its times and what the figures do not say."""

    test: str
    verdict: str
    times: dict[str, float]
    limits: dict[str, float]
    notes: list[str] = field(default_factory=list)
    events: tuple[dict[str, Any], ...] = ()

    def cells(self) -> dict[str, str]:
        def s(name: str) -> str:
            if name not in self.times:
                return "—"
            limit = self.limits.get(name)
            return f"{format_number(self.times[name])} s" + (
                f" (≤ {format_number(limit)} s)" if limit is not None else "")
        return {"test": self.test, "verdict": self.verdict, "detect": s(degraded.DETECT),
                "failover": s(degraded.FAILOVER), "recovery": s(degraded.RECOVERY),
                "notes": "; ".join(self.notes) or "—"}


@dataclass
class ScenarioPart:
    """One fault scenario's part of the section."""

    name: str
    figures: list[FigureLine]
    faults: list[FaultLine]
    #: Its clause as the verified reference file states it ('' without one).
    clause: str = ""

    @property
    def title(self) -> str:
        return f"Scenario {self.name}" if self.name else "Without a named scenario"


@dataclass
class DegradedSection:
    figures: list[FigureLine]
    faults: list[FaultLine]
    #: The contract's clause as the verified reference file states it ('' without one).
    clause: str = ""
    #: With named fault scenarios, each its part (in the order its tests ran); empty
    #: when no test ran under one (``figures``, ``faults`` and ``clause`` then say all).
    scenarios: list[ScenarioPart] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.faults)


def _healthy_counterparts(tests: list[Test]) -> dict[str, Test]:
    """Reference key -> the healthy acceptance test of this session that reads it."""
    out = {}
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is not None and spec.role == "acceptance" and not spec.degraded:
            out.setdefault(spec.key, t)
    return out


def _healthy_value(test: Test | None, figure: str) -> float | None:
    row = next((fr for fr in test.figures if fr.name == figure), None) if test else None
    return row.value if row is not None and test.verdict == "PASS" else None


def drawn(section: DegradedSection | None, budget: PlotBudget) -> Plot | None:
    """The section's timeline through the report's plot budget, drawn whatever the budget
    (:func:`.plots.timeline_plot`); None without a section."""
    return budget.draw("degraded-mode-timeline", "\0degraded", "Degraded mode: faults and "
                       "recoveries", lambda: timeline_plot(section),
                       budgeted=False) if section else None


def degraded_section(tests: list[Test], reference: Any = None) -> DegradedSection:
    """The section's rows, from the session's tests (``reference``: the verified file,
    for the healthy thresholds and the contract's fractions; None: those recorded),
    each judged by its scenario's clause."""
    mode = reference.degraded_mode if reference is not None else None
    healthy = _healthy_counterparts(tests)
    figures, faults = [], []
    parts: dict[str, ScenarioPart] = {}
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is None or not spec.degraded:
            continue
        clause = _clause(reference, t.scenario) if mode is not None else None
        part = parts.setdefault(t.scenario, ScenarioPart(
            t.scenario, [], [], _clause_text(clause) if clause is not None else ""))
        contract = (clause.tests.get(spec.key) if clause is not None else None) if mode \
            else t.case.get("degraded_fraction")
        thresholds = _healthy_thresholds(reference, spec.key)
        for fr in t.figures:
            if fr.name in degraded.FIGURES or not _judged(fr):
                continue
            measured = _healthy_value(healthy.get(spec.key), fr.name)
            th = thresholds.get(fr.name) or (thresholds.get("") if fr.name == spec.main_figure
                                             else None)
            line = FigureLine(
                t.name, fr.name, fr.unit, fr.value,
                measured if measured is not None else (th.value if th else None),
                "measured" if measured is not None else "threshold",
                # A threshold the class fixes (no wrong transfer) is not scaled.
                None if fr.name in spec.fixed_thresholds or not isinstance(
                    contract, (int, float)) else contract,
                "FAIL" if fr.failed else ("PASS" if t.verdict in ("PASS", "FAIL")
                                          else t.verdict))
            figures.append(line)
            part.figures.append(line)
        fault = degraded.fault_from(str(t.case.get("fault_timeline") or ""))[0]
        limits = ({degraded.RECOVERY: clause.max_recovery_s,
                   **({degraded.FAILOVER: clause.max_failover_s} if clause.max_failover_s
                      else {})} if clause is not None else {})
        line = FaultLine(t.name, t.verdict, fault.figures, limits, fault.notes(),
                         fault.events)
        faults.append(line)
        part.faults.append(line)
    if list(parts) == [""]:  # no scenario named: the section as one
        return DegradedSection(figures, faults, parts[""].clause)
    clause = _clause_text(mode) if mode is not None and not parts else ""
    return DegradedSection(figures, faults, clause, list(parts.values()))


def _clause(reference: Any, scenario: str) -> Any:
    """The clause a test of ``scenario`` is judged by (None: the file has none for it:
    the test's own verdict says why)."""
    try:
        return reference.degraded_clause(scenario)
    except ReferenceError:
        return None


def _clause_text(mode: Any) -> str:
    """The contract's clause in words."""
    return (f"While a storage server is down, each figure at least "
            f"{mode.fraction:.0%} of its healthy threshold (per test where the "
            f"reference says so), and the file system healed within "
            f"{format_number(mode.max_recovery_s)} s of its restore"
            + (f"; the first write within {format_number(mode.max_failover_s)} s of "
               "the fault" if mode.max_failover_s else "") + ".")


def _judged(row: Any) -> bool:
    th = row.threshold
    return th.lower_limit is not None or th.upper_limit is not None


def _healthy_thresholds(reference: Any, key: str) -> dict[str, Any]:
    if reference is None:
        return {}
    try:
        return reference.thresholds(key)
    except (ValueError, KeyError):
        return {}
