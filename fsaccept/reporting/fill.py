"""The sign-off's "Fill level" section: each figure measured at the declared fill level
beside its empty counterpart (the same test, run empty in the same session), the share
of it reached against ``1 - max_degradation``, and the level the filler reached (blocks
and inodes, from df before and once filled), with a plot.

Which tests are filled re-runs, and which empty test each is compared with, is the
catalogue's (a ``Filled<Check>`` and the test of its key that is not filled), never the
run report's tags; the level is re-judged from the filled tests' fill record by the
functions the live check used (:mod:`fsaccept.core.fill`).  A figure that FAILs blocks
the sign-off; one that cannot be judged (its empty or filled figure missing or no
figure) or filled tests that recorded different fills leave it INCOMPLETE at best; a
test ``fill.tests`` lists that did not run, empty or filled, is the session's to say
(:mod:`fsaccept.reporting.session`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from fsaccept.benchmarks.catalogue import ACCEPTANCE
from fsaccept.core import fill
from fsaccept.core.formatting import format_number
from fsaccept.reporting.plotbudget import Plot, PlotBudget
from fsaccept.reporting.signoff.fill import fill_evidence_of
from fsaccept.reporting.runreport import FAIL, PASS, Test
from fsaccept.reporting.verdicts import spec_of_case


@dataclass(frozen=True)
class FigureLine:
    """One figure, empty against filled, and its judgement."""

    test: str
    #: The empty counterpart's name ('' when none ran).
    empty_test: str
    pair: fill.Pair
    judged: fill.Judgement

    def cells(self) -> dict[str, str]:
        p, j = self.pair, self.judged

        def q(v: float | None) -> str:
            return "—" if v is None else f"{format_number(v)} {p.unit}"
        r = fill.reached(p)
        return {"test": self.test, "figure": p.figure, "empty": q(p.empty),
                "filled": q(p.filled),
                "reached": f"{r:.1%}" if math.isfinite(r) else "—",
                "limit": "—" if j.limit is None else f"at least {j.limit:.0%}",
                "verdict": j.verdict, "reasons": "; ".join(j.reasons) or "—"}


@dataclass
class FillSection:
    #: The fill the filled tests recorded (None: none could be read).
    evidence: fill.Evidence | None = None
    #: The level and the filler, judged.
    level: list[fill.Judgement] = field(default_factory=list)
    figures: list[FigureLine] = field(default_factory=list)
    #: What the section finds against the sign-off: FAIL lines, and what it cannot verify.
    failures: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    #: The limits judged by: the verified reference's, else the record's.
    limits: fill.Limits | None = None

    def __bool__(self) -> bool:
        return bool(self.figures or self.incomplete or self.evidence is not None)

    @property
    def verdict(self) -> str:
        return fill.verdict([*self.level, *(f.judged for f in self.figures)])

    def level_rows(self) -> list[dict[str, str]]:
        """One row for the blocks, one for the inodes (when either df counts them): df
        before the filler and once filled, the declared level, and its verdict."""
        ev, lim = self.evidence, self.limits
        if ev is None or lim is None:
            return []
        before, filled = ev.df.get(fill.BEFORE), ev.df.get(fill.FILLED)

        def at(d: fill.Df | None, inodes: bool) -> str:
            if d is None or d.problems():
                return "—"
            if inodes:
                return (f"{d.inode_level:.2%} ({d.iused:,} of {d.itotal:,})"
                        if d.itotal else "— (none reported)")
            return f"{d.level:.2%} ({fill.human(d.used)} of {fill.human(d.capacity)})"
        level = next((j for j in self.level if j.what == "level"), None)
        rows = [{"what": "blocks", "before": at(before, False), "filled": at(filled, False),
                 "declared": f"{lim.fraction:.0%} (at least "
                             f"{lim.fraction - lim.tolerance:.0%})",
                 "verdict": level.verdict if level else "—"}]
        if lim.inode_fraction is not None or any(d is not None and d.itotal
                                                 for d in (before, filled)):
            rows.append({"what": "inodes", "before": at(before, True),
                         "filled": at(filled, True),
                         "declared": "—" if lim.inode_fraction is None else
                         f"{lim.inode_fraction:.0%} (at least "
                         f"{lim.inode_fraction - lim.tolerance:.0%})",
                         "verdict": (level.verdict if level and lim.inode_fraction
                                     is not None else "—")})
        return rows

    def filler_text(self) -> str:
        """The filler in one sentence: what was planned and written, on how many nodes,
        what df saw stored, the ageing."""
        ev = self.evidence
        if ev is None:
            return ""
        before, filled = ev.df.get(fill.BEFORE), ev.df.get(fill.FILLED)
        text = (f"{fill.human(ev.written)} of irreducible filler written by "
                f"{len(ev.nodes):,} node(s) ({fill.human(ev.planned_bytes)} planned)")
        if before is not None and filled is not None and ev.written > 0:
            text += (f"; df saw {fill.human(filled.used - before.used)} more used "
                     f"({(filled.used - before.used) / ev.written:.3g} x written)")
        if ev.churn_rounds:
            done = min((n.rounds for n in ev.nodes), default=0)
            text += (f"; {done} of {ev.churn_rounds} round(s) of ageing, "
                     f"{fill.human(sum(n.churn_bytes for n in ev.nodes))} written again")
        return text

    def rows(self) -> list[dict[str, str]]:
        """One row per judgement of the fill itself (the level, the filler)."""
        def q(j: fill.Judgement, v: float | None) -> str:
            if v is None:
                return "—"
            return f"{v:.2%}" if j.what == "level" else fill.human(v)
        return [{"judgement": j.what, "measured": q(j, j.value),
                 "limit": ("—" if j.limit is None else f"at least {j.limit:.2%}"
                           if j.what == "level" else f"{fill.human(j.limit)} planned"),
                 "verdict": j.verdict, "reasons": "; ".join(j.reasons) or "—"}
                for j in self.level]


def _empty_counterparts(tests: list[Test]) -> dict[str, Test]:
    """Reference key -> the acceptance test of this session that reads it, run empty
    (neither filled nor degraded)."""
    out = {}
    for t in tests:
        spec = spec_of_case(t.case)
        if spec is not None and spec.role == ACCEPTANCE and not (spec.filled
                                                                 or spec.degraded):
            out.setdefault(spec.key, t)
    return out


def compared(spec: Any, empty: Test | None, filled: Test) -> list[str]:
    """The figures a filled test is compared by: each its empty counterpart judged
    against a threshold (the contract's), but those its class always judges the same way
    (no wrong transfer), those whose 0 is a measurement, and the slow-client count.  When
    the empty test ran none (it did not run, or measured nothing), its main figure: the
    line that says why it cannot be judged."""
    def kept(name: str) -> bool:
        return fill.compares(name, spec.fixed_thresholds, spec.may_be_zero)
    if empty is not None:
        names = [r.name for r in empty.figures if kept(r.name) and r.threshold.judged]
        if names:
            return names
    if spec.main_figure and not spec.main_figure.startswith("^"):
        return [spec.main_figure]
    # A figure named after the entry (fio's block size): the first the tests report.
    named = [r.name for t in (empty, filled) if t is not None for r in t.figures
             if kept(r.name) and spec.reports(r.name)]
    return named[:1] or [spec.main_figure]


def _value(test: Test | None, figure: str, what: str) -> tuple[float | None, str]:
    """(the figure of a test that measured, or None; why none)."""
    if test is None:
        return None, f"no {what} test ran"
    if test.verdict not in (PASS, FAIL):
        return None, f"the {what} test {test.name} is {test.verdict}"
    row = next((r for r in test.figures if r.name == figure), None)
    if row is None or row.value is None:
        return None, f"the {what} test {test.name} reports no {figure}"
    return row.value, ""


def fill_section(tests: list[Test], reference: Any = None) -> FillSection:
    """The section of a session with filled tests (empty when it has none):
    ``reference``, the verified file, gives the limits; None (or a file without
    ``fill:``, which each filled test's own reasons name): those the filled tests
    recorded."""
    filled = [(t, s) for t in tests if (s := spec_of_case(t.case)) is not None and s.filled]
    if not filled:
        return FillSection()
    out = FillSection()
    records: dict[str, fill.Evidence] = {}
    for t, _ in filled:
        ev, _why = fill_evidence_of(t.case)  # its own INVALID reason says why not
        if ev is not None:
            records.setdefault(json.dumps(ev.to_dict(), sort_keys=True), ev)
    if len(records) > 1:
        out.incomplete.append(f"fill: the filled tests recorded {len(records)} different "
                              "fills: a session fills its target once")
    out.evidence = next(iter(records.values()), None)
    mode = reference.fill_mode if reference is not None else None
    out.limits = mode.limits if mode is not None else (
        out.evidence.limits if out.evidence is not None else None)
    if out.evidence is not None:
        out.level = [fill.judge_level(out.evidence), fill.judge_filler(out.evidence)]
    else:
        out.incomplete.append("fill: no filled test recorded a fill record that can be read")
    empty = _empty_counterparts(tests)
    for t, spec in filled:
        counterpart = empty.get(spec.key)
        for figure in compared(spec, counterpart, t):
            e, why_e = _value(counterpart, figure, "empty")
            f, why_f = _value(t, figure, "filled")
            unit = next((r.unit for r in (counterpart or t).figures if r.name == figure),
                        "")
            pair = fill.Pair(t.name, figure, unit, e, f, why_e or why_f)
            judged = (fill.judge_figure(pair, out.limits.max_degradation)
                      if out.limits is not None else fill.Judgement(
                          "figure", fill.INVALID, (f"{t.name}: {figure}: no limits to judge "
                                                  "by (no fill record, no reference)",),
                          figure=figure))
            out.figures.append(FigureLine(t.name, counterpart.name if counterpart else "",
                                          pair, judged))
            if judged.verdict == fill.FAIL:
                out.failures += [f"fill: {r}" for r in judged.reasons]
            elif judged.verdict == fill.INVALID:
                out.incomplete += [f"fill: {r}" for r in judged.reasons]
    return out


def drawn(section: FillSection | None, budget: PlotBudget) -> Plot | None:
    """The section's chart through the report's plot budget (:func:`plot`); None without
    a section."""
    return budget.draw("fill-level", "\0fill", "Fill level: each figure filled against "
                       "empty", lambda: plot(section)) if section else None


def plot(section: FillSection) -> bytes | None:
    """Two panels: the level (blocks, and inodes when declared) before the filler and
    once filled against the declared level; each figure filled as a share of its empty
    figure against ``1 - max_degradation``.  None when nothing is drawable."""
    from fsaccept.reporting.plots import _png, _pyplot

    lines = [f for f in section.figures if math.isfinite(fill.reached(f.pair))]
    ev, lim = section.evidence, section.limits
    levels = []
    if ev is not None and lim is not None:
        before, filled = ev.df.get(fill.BEFORE), ev.df.get(fill.FILLED)
        for what, get, want in (("blocks", lambda d: d.level, lim.fraction),
                                ("inodes", lambda d: d.inode_level, lim.inode_fraction)):
            pair = [get(d) if d is not None and not d.problems() else math.nan
                    for d in (before, filled)]
            if want is not None and any(math.isfinite(v) for v in pair):
                levels.append((what, pair, want))
    if not lines and not levels:
        return None
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.6), layout="constrained",
                                      gridspec_kw={"width_ratios": [1, 3]})
    for i, (what, (b, f), want) in enumerate(levels):
        left.bar([i - 0.2], [b if math.isfinite(b) else 0], 0.4, color="#9ab",
                 label="before" if i == 0 else None)
        left.bar([i + 0.2], [f if math.isfinite(f) else 0], 0.4, color="#1a56b0",
                 label="filled" if i == 0 else None)
        left.hlines(want, i - 0.45, i + 0.45, color="#b00020",
                    label="declared" if i == 0 else None)
    left.set_xticks(range(len(levels)), [w for w, _, _ in levels], fontsize=8)
    left.set_ylim(0, 1)
    left.set_ylabel("share used", fontsize=8)
    left.tick_params(labelsize=8)
    left.set_title("Fill level", fontsize=9, loc="left")
    if levels:
        left.legend(fontsize=6, loc="lower right")
    ratios = [min(fill.reached(f.pair), 10.0) for f in lines]
    colors = ["#b00020" if f.judged.verdict == fill.FAIL else "#1a56b0" for f in lines]
    right.barh(range(len(lines)), ratios, color=colors)
    right.set_yticks(range(len(lines)), [f"{f.test.split()[0]}: {f.pair.figure}"
                                         for f in lines], fontsize=7)
    right.invert_yaxis()
    if lim is not None:
        right.axvline(1 - lim.max_degradation, color="#b00020", linewidth=1,
                      label=f"floor: {1 - lim.max_degradation:.0%} of empty")
        right.legend(fontsize=6, loc="lower right")
    right.axvline(1.0, color="grey", linewidth=0.8, linestyle="--")
    right.set_xlim(0, max([1.1, *ratios]) * 1.05)
    right.set_xlabel("filled / empty (a time: empty / filled)", fontsize=8)
    right.tick_params(labelsize=8)
    right.set_title("Each figure filled, as a share of empty", fontsize=9, loc="left")
    return _png(fig)
