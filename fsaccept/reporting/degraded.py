"""The sign-off's "Degraded mode" section: each figure measured while a storage server
was down beside its healthy counterpart (measured in the same session, else the healthy
threshold), the fraction it reached against the contract's, and each fault's times to
detect, to fail over and to recover, with a timeline plot.

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
from fsaccept.core.reference import TIME_UNITS
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
class DegradedSection:
    figures: list[FigureLine]
    faults: list[FaultLine]
    #: The contract's clause as the verified reference file states it ('' without one).
    clause: str = ""

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


def degraded_section(tests: list[Test], reference: Any = None) -> DegradedSection:
    """The section's rows, from the session's tests (``reference``: the verified file,
    for the healthy thresholds and the contract's fractions; None: those recorded)."""
    mode = reference.degraded_mode if reference is not None else None
    healthy = _healthy_counterparts(tests)
    figures, faults = [], []
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is None or not spec.degraded:
            continue
        contract = mode.tests.get(spec.key) if mode else t.case.get("degraded_fraction")
        thresholds = _healthy_thresholds(reference, spec.key)
        for fr in t.figures:
            if fr.name in degraded.FIGURES or not _judged(fr):
                continue
            measured = _healthy_value(healthy.get(spec.key), fr.name)
            th = thresholds.get(fr.name) or (thresholds.get("") if fr.name == spec.main_figure
                                             else None)
            figures.append(FigureLine(
                t.name, fr.name, fr.unit, fr.value,
                measured if measured is not None else (th.value if th else None),
                "measured" if measured is not None else "threshold",
                # A threshold the class fixes (no wrong transfer) is not scaled.
                None if fr.name in spec.fixed_thresholds or not isinstance(
                    contract, (int, float)) else contract,
                "FAIL" if fr.failed else ("PASS" if t.verdict in ("PASS", "FAIL")
                                          else t.verdict)))
        fault = degraded.fault_from(str(t.case.get("fault_timeline") or ""))[0]
        limits = ({degraded.RECOVERY: mode.max_recovery_s,
                   **({degraded.FAILOVER: mode.max_failover_s} if mode.max_failover_s
                      else {})} if mode else {})
        faults.append(FaultLine(t.name, t.verdict, fault.figures, limits, fault.notes(),
                                fault.events))
    clause = ""
    if mode is not None:
        clause = (f"While a storage server is down, each figure at least "
                  f"{mode.fraction:.0%} of its healthy threshold (per test where the "
                  f"reference says so), and the file system healed within "
                  f"{format_number(mode.max_recovery_s)} s of its restore"
                  + (f"; the first write within {format_number(mode.max_failover_s)} s of "
                     "the fault" if mode.max_failover_s else "") + ".")
    return DegradedSection(figures, faults, clause)


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
