"""The sign-off's "IO500" section: each IO500 test's score, BW and MD; its phase table
with times; the reasons for its verdict; and its score recomputed from its phase scores
by IO500's rule beside the one IO500 printed (IO500's own hash verifier is not used: it
rejects untouched results in the releases sites run, IO500/io500#84, #103).

Which tests are IO500 tests is the catalogue's; everything shown is re-read from the
case's recorded results (``io500_result``) by the functions the live check used
(:mod:`fsaccept.benchmarks.io500`), and the verdict is the sign-off's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fsaccept.benchmarks.io500 import score as io500_score
from fsaccept.benchmarks.io500 import spec as io500_spec
from fsaccept.benchmarks.io500.parse import NONE, SCORE_UNITS, figures_of
from fsaccept.core.formatting import format_number
from fsaccept.reporting.signoff.common import benchmark_of
from fsaccept.reporting.signoff.io500 import io500_run
from fsaccept.reporting.runreport import Test
from fsaccept.reporting.verdicts import spec_of_case


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.6f}"


@dataclass(frozen=True)
class ScoreLine:
    """One figure of a [SCORE]/[SCOREX]: as printed, and as the phases give it."""

    score: str  #: ``SCORE`` or ``SCOREX``
    figure: str  #: ``TOTAL``, ``BW`` or ``MD``
    printed: float | None
    recomputed: float
    agrees: bool | None  #: None: nothing printed

    def cells(self) -> dict[str, str]:
        unit = {"TOTAL": "", "BW": " GiB/s", "MD": " kIOPS"}[self.figure]
        return {"score": f"[{self.score}]", "figure": self.figure,
                "printed": _num(self.printed) + (unit if self.printed is not None else ""),
                "recomputed": _num(self.recomputed) + unit,
                "check": {True: "agrees (within the printed precision)",
                          False: "MISMATCH", None: "nothing printed"}[self.agrees]}


@dataclass(frozen=True)
class PhaseLine:
    name: str
    group: str
    score: float | None
    unit: str
    time_s: float | None
    io500_invalid: bool | None

    def cells(self) -> dict[str, str]:
        return {"phase": self.name, "group": self.group if self.group != NONE else "—",
                "score": "—" if self.score is None else f"{self.score:.6f} {self.unit}",
                "time": "—" if self.time_s is None else f"{format_number(self.time_s)} s",
                "io500": "INVALID" if self.io500_invalid else ("—" if self.io500_invalid
                                                               is None else "valid")}


@dataclass
class Io500Case:
    """One IO500 test of the session."""

    test: str
    verdict: str
    reason: str
    about: str  #: version, mode, ranks, IO500's own verdict
    figures: dict[str, str] = field(default_factory=dict)  #: total/bw/md as reported
    scores: list[ScoreLine] = field(default_factory=list)
    phases: list[PhaseLine] = field(default_factory=list)


def io500_section(tests: list[Test]) -> list[Io500Case]:
    """The section's IO500 tests (none: no section)."""
    out = []
    for t in tests:
        if benchmark_of(spec_of_case(t.case)) is not io500_spec.BENCHMARK:
            continue
        run = io500_run(t.case)
        # As IO500 reported them (a run judged INVALID reports no performance figure).
        reported = ({n: v for n, (v, _) in figures_of(run).items()} if run is not None
                    else {fr.name: fr.value for fr in t.figures})
        figures = {name: ("—" if reported.get(name) is None
                          else f"{reported[name]:.6f}" + (f" {unit}" if unit != "score" else ""))
                   for name, unit in SCORE_UNITS.items()}
        if run is None:
            out.append(Io500Case(t.name, t.verdict, t.reason, "no IO500 results recorded",
                                 figures))
            continue
        io500_says = {True: "valid", False: "INVALID", None: "no [SCORE]"}[run.io500_valid]
        about = (f"IO500 {run.version or 'version unknown'} ({run.mode or 'mode unknown'}), "
                 f"{run.procs if run.procs is not None else '?'} ranks; IO500's own verdict: "
                 f"{io500_says}")
        scores = []
        for name, recomputed in io500_score.recompute_all(run).items():
            printed = run.scores.get(name) or run.printed_scores.get(name)
            for key, attr in (("TOTAL", "total"), ("BW", "bw"), ("MD", "md")):
                value = getattr(printed, attr) if printed is not None else None
                fig = recomputed[key]
                scores.append(ScoreLine(name, key, value, fig["value"],
                                        None if value is None
                                        else io500_score.agrees(value, fig)))
        phases = [PhaseLine(ph.name, ph.group, ph.score, ph.unit, ph.time_s, ph.io500_invalid)
                  for ph in run.phases]
        out.append(Io500Case(t.name, t.verdict, t.reason, about, figures, scores, phases))
    return out
