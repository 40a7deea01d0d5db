"""Two sign-offs compared: each figure of run B over the same figure of run A, with its
confidence interval from the repetitions (``fsaccept compare RUN_A RUN_B``).

Phase I against Phase II, before and after an upgrade, the vendor's run against the
site's.  Each run is judged as its report judges it (:func:`.report.signoff_context`:
its figures rebuilt from its outputs, its manifest verified); the comparison says which
manifest it could not verify.

A pair is two tests of the same catalogue identity (the test's name, its target, its
fault scenario) whose recorded configuration is the same: the benchmark, the options
its entry sizes (``Benchmark.sized_options``: IOR's ``-t -b -s -D``...), the nodes, the
ranks per node, direct or buffered I/O and the file system.  A pair whose configuration
differs is "not comparable", naming what differs, never a ratio; so is a test that is
not a valid measurement on a side (INVALID, ERROR, skipped).  A valid pair's figures get
their ratio B / A (:class:`fsaccept.core.statistics.Ratio`): with one repetition on a
side, no interval can be given, and the comparison says so.

A figure is better higher (a rate: its threshold is a floor) or lower (a time, or a
count whose threshold is a ceiling).  ``--min-ratio R`` exits 1 when a significant
ratio makes B worse than A by more than the factor R: a rate's B / A below R, a time's
above 1 / R.  Exit 2: a run that cannot be read, or an option that cannot be used.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fsaccept.benchmarks import registry
from fsaccept.core import statistics
from fsaccept.core.formatting import one_line, prefixed_lines
from fsaccept.core.units import TIME_UNITS
from fsaccept.reporting.assessment import CeilingError
from fsaccept.reporting.runreport import FigureRow, Test
from fsaccept.reporting.signoff.contract import recorded_argv, sized_values
from fsaccept.reporting.verdicts import FAIL, PASS, RunReportError, spec_of_case

#: What ``fsaccept compare`` writes into ``--out``.
MARKDOWN, HTML, FOREST_PLOT = "comparison.md", "comparison.html", "forest-plot.png"
#: ReFrame's run report in a run directory given instead of the file.
RUN_REPORT = "run-report.json"
#: The ratios the forest plot's axis marks (those within its range).
TICKS = (0.01, 0.1, 0.25, 0.5, 0.66, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 4, 10, 100)
#: The verdicts of a test that measured (its figures can be compared).
MEASURED = (PASS, FAIL)


class CompareError(Exception):
    """A run that cannot be compared, or an option that cannot be used; exit 2."""


@dataclass(frozen=True)
class Run:
    """One side: its run report, its sign-off verdict, its manifest, its tests."""

    label: str
    path: Path
    verdict: str
    integrity: str
    verified: bool
    tests: list[Test]


@dataclass(frozen=True)
class Pair:
    """One figure of one test in both runs: its ratio, or why there is none."""

    test: str
    figure: str
    unit: str
    a: statistics.Spread | None = None
    b: statistics.Spread | None = None
    #: Why the two cannot be compared ("" when they can).
    not_comparable: str = ""
    higher_is_better: bool = True

    @property
    def ratio(self) -> statistics.Ratio | None:
        if self.not_comparable or self.a is None or self.b is None or self.a.mean == 0:
            return None
        return statistics.ratio(self.a, self.b)

    @property
    def text(self) -> str:
        """``IORWriteBandwidth write_bandwidth: 0.66 ± 0.02 × (…: B is lower;
        significant): B is worse``, or why there is no ratio."""
        return f"{self.test} {self.figure}: {self.said}"

    @property
    def said(self) -> str:
        """The ratio with its interval and what it means, or why there is none."""
        if self.not_comparable:
            return f"not comparable: {self.not_comparable}"
        r = self.ratio
        if r is None:
            return (f"0 {self.unit} on both sides" if self.b is not None and self.b.mean == 0
                    else "no ratio: A's figure is 0")
        worse = self.worse
        return r.text() + ("" if worse is None else ": B is worse" if worse
                           else ": B is better")

    @property
    def worse(self) -> bool | None:
        """Whether B is significantly worse than A (None: not significant, or no
        interval)."""
        r = self.ratio
        if r is None or not r.significant:
            return None
        return (r.value < 1) == self.higher_is_better

    def below(self, min_ratio: float) -> bool:
        """Whether B is significantly worse than A by more than the factor ``min_ratio``."""
        r = self.ratio
        if r is None or not self.worse:
            return False
        return r.value < min_ratio if self.higher_is_better else r.value > 1 / min_ratio


@dataclass(frozen=True)
class Comparison:
    a: Run
    b: Run
    pairs: list[Pair]
    #: Tests found in one run only: (its identity, "A" or "B").
    alone: list[tuple[str, str]] = field(default_factory=list)

    @property
    def significant(self) -> list[Pair]:
        return [p for p in self.pairs if p.ratio is not None and p.ratio.significant]


# --------------------------------------------------------------------------- pure


def identity(t: Test) -> str:
    """A test's catalogue identity: its name (parameters included), its target, its
    fault scenario."""
    return " ".join(x for x in (t.name, t.target and f"target {t.target}",
                                t.scenario and f"scenario {t.scenario}") if x)


def configuration(t: Test) -> dict[str, str]:
    """What a figure of ``t`` is meaningless without, as its last run recorded it: the
    benchmark, the options its entry sizes, the nodes, the ranks per node, direct or
    buffered I/O, the file system."""
    case = t.case
    spec = spec_of_case(case)
    bench = registry.BENCHMARKS.get(spec.benchmark) if spec is not None else None
    out = {"benchmark": spec.benchmark if spec is not None else "not in the catalogue"}
    if bench is not None:
        out.update(sized_values(recorded_argv(case), bench.sized_options))
    direct = case.get("direct_io")
    out.update({"nodes": str(t.nodes or "—"), "ranks per node": str(t.ranks_per_node or "—"),
                "I/O": "direct" if direct is True else "buffered" if direct is False else "—",
                "file system": str(case.get("job_fstype") or case.get("target_fstype")
                                   or "—")})
    return out


def differences(a: dict[str, str], b: dict[str, str]) -> str:
    """'nodes 4 in A, nodes 2 in B; -t 1m in A, -t 4k in B' ('' when the same)."""
    def shown(key: str, value: str | None) -> str:
        if value is None:
            return f"no {key}"
        return value if value.startswith(key) else f"{key} {value}"  # '-t 1m' as given
    return "; ".join(f"{shown(key, a.get(key))} in A, {shown(key, b.get(key))} in B"
                     for key in dict.fromkeys([*a, *b]) if a.get(key) != b.get(key))


def _higher_is_better(row: FigureRow) -> bool:
    """A figure whose threshold is a ceiling, or a time, is better lower."""
    t = row.threshold
    if t.upper is not None and t.lower is None:
        return False
    if t.lower is not None:
        return True
    return row.unit not in TIME_UNITS


def _spread(row: FigureRow | None) -> tuple[statistics.Spread | None, str]:
    if row is None:
        return None, ""
    try:
        return statistics.spread(row.values), ""
    except ValueError as err:
        return None, str(err)


def compare_tests(a: list[Test], b: list[Test]) -> tuple[list[Pair], list[tuple[str, str]]]:
    """Every figure of the tests both runs have, paired; and the tests one run has alone."""
    by_a, by_b = {identity(t): t for t in a}, {identity(t): t for t in b}
    alone = [(k, "A") for k in by_a if k not in by_b] + [(k, "B") for k in by_b
                                                        if k not in by_a]
    pairs = []
    for key, ta in by_a.items():
        tb = by_b.get(key)
        if tb is None:
            continue
        why = ""
        for side, t in (("A", ta), ("B", tb)):
            if t.verdict not in MEASURED and not why:
                why = f"{t.verdict} in {side}" + (f" ({one_line(t.reason)[:200]})"
                                                  if t.reason else "")
        differ = differences(configuration(ta), configuration(tb))
        why = why or (f"its configuration differs: {differ}" if differ else "")
        rows_b = {r.name: r for r in tb.figures}
        for row in ta.figures:
            rb = rows_b.get(row.name)
            sa, bad_a = _spread(row)
            sb, bad_b = _spread(rb)
            reason = why or ("no such figure in B" if rb is None else
                             f"A's figure: {bad_a}" if bad_a else
                             f"B's figure: {bad_b}" if bad_b else
                             f"units differ: {row.unit} in A, {rb.unit} in B"
                             if rb.unit != row.unit else "")
            pairs.append(Pair(key, row.name, row.unit, sa, sb, reason,
                              _higher_is_better(row)))
        names_a = {r.name for r in ta.figures}
        pairs += [Pair(key, r.name, r.unit, None, _spread(r)[0], why or "no such figure in A")
                  for r in tb.figures if r.name not in names_a]
    return pairs, alone


def summary_lines(c: Comparison, min_ratio: float | None = None) -> list[str]:
    """What ``fsaccept compare`` prints: each run, each pair, the significant ones."""
    lines = [f"{r.label}: {one_line(r.path)}: {r.verdict}; manifest: {one_line(r.integrity)}"
             for r in (c.a, c.b)]
    lines += [f"unverified: {r.label}: its figures are as its run report and outputs give "
              "them, no manifest vouches for them" for r in (c.a, c.b) if not r.verified]
    lines += [p.text for p in c.pairs]
    lines += [f"{key}: in {side} only" for key, side in c.alone]
    n = len([p for p in c.pairs if p.ratio is not None and p.ratio.interval is not None])
    lines.append(f"compare: {len(c.significant)} of {n} ratios with an interval are "
                 f"significant; {len([p for p in c.pairs if p.not_comparable])} pairs "
                 "not comparable")
    if min_ratio is not None:
        below = [p for p in c.pairs if p.below(min_ratio)]
        lines.append(f"compare: --min-ratio {min_ratio:g}: "
                     + (f"{len(below)} significant ratios worse than it: "
                        + ", ".join(f"{p.test} {p.figure}" for p in below) if below
                        else "no significant ratio worse than it"))
    return lines


def forest_plot(pairs: Iterable[Pair]) -> bytes | None:
    """Every ratio with its interval on a log scale, and the line at 1 (None: no ratio)."""
    from fsaccept.reporting.plots import _png, _pyplot
    drawn = [p for p in pairs if p.ratio is not None and p.ratio.value > 0]
    if not drawn:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.35 * len(drawn)), layout="constrained")
    for y, p in enumerate(reversed(drawn)):
        r = p.ratio
        iv = r.interval
        colour = ("tab:red" if p.worse else "tab:green" if p.worse is False
                  else "tab:gray")
        if iv is not None:
            ax.plot(list(iv), [y, y], color=colour, linewidth=2)
        ax.plot([r.value], [y], "o" if iv is not None else "x", color=colour)
    ax.axvline(1, color="black", linewidth=1)
    ax.set_xscale("log")
    ends = [x for p in drawn for x in (p.ratio.interval or (p.ratio.value,))]
    low, high = min(min(ends), 1) / 1.1, max(max(ends), 1) * 1.1
    ax.set_xlim(low, high)
    ax.set_xticks(_spaced([t for t in TICKS if low <= t <= high], low, high), minor=False)
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_minor_formatter(lambda v, _: "")
    ax.set_yticks(range(len(drawn)))
    ax.set_yticklabels([f"{p.test} {p.figure}"[:60] for p in reversed(drawn)], fontsize=8)
    ax.set_xlabel("B / A (95 % CI; × : one repetition, no interval)")
    ax.set_title("Each figure of B over A")
    return _png(fig)


def _spaced(ticks: list[float], low: float, high: float) -> list[float]:
    """The ticks at least a tenth of the axis apart (on its log scale), 1 always kept."""
    gap = (math.log10(high) - math.log10(low)) / 10
    kept: list[float] = []
    for t in sorted(ticks, key=lambda t: (t != 1, t)):
        if all(abs(math.log10(t) - math.log10(k)) >= gap for k in kept):
            kept.append(t)
    return sorted(kept)


# --------------------------------------------------------------------------- runs


def run_report_of(path: str) -> Path:
    """A run directory's run report, or the file given; CompareError if there is none."""
    p = Path(path)
    if p.is_dir():
        p = p / RUN_REPORT
    if not p.is_file():
        raise CompareError(f"{path}: no run report (a run directory holds {RUN_REPORT})")
    return p


def load(label: str, path: str, allowed_signers: str | None = None) -> Run:
    """One side, judged as its report judges it (no plots drawn)."""
    from fsaccept.reporting.report import signoff_context
    report = run_report_of(path)
    try:
        ctx = signoff_context(report, plots=False, allowed_signers=allowed_signers)
    except (RunReportError, CeilingError) as err:
        raise CompareError(f"{label} ({path}): {err}") from None
    integrity = ctx["integrity"]
    return Run(label, report, ctx["judged"].verdict,
               integrity.text if integrity is not None else "not verified: no manifest",
               integrity is not None and integrity.verified, ctx["tests"])


def write(c: Comparison, out: Path, min_ratio: float | None) -> list[Path]:
    """comparison.md, comparison.html and plots/forest-plot.png into ``out``, as the
    sign-off report writes its own (:func:`.report.write_pages`)."""
    from fsaccept.reporting.plotbudget import Plot
    from fsaccept.reporting.report import ReportWriteError, render, write_pages
    png = forest_plot(c.pairs)
    plots = [Plot(FOREST_PLOT, "Each figure of B over A", png)] if png else []
    context = {"c": c, "min_ratio": min_ratio, "plot": f"plots/{FOREST_PLOT}" if png else "",
               "summary": summary_lines(c, min_ratio)[-1 if min_ratio is None else -2:]}
    pages = {name: render(context, name + ".j2") for name in (MARKDOWN, HTML)}
    try:
        return write_pages(out, pages, plots)
    except ReportWriteError as err:
        raise CompareError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="fsaccept compare",
        description="compare two sign-offs: each figure of RUN_B over RUN_A's, with its "
                    "confidence interval from the repetitions; writes comparison.md, "
                    "comparison.html and plots/forest-plot.png")
    ap.add_argument("run_a", metavar="RUN_A", help="a run directory (or its run-report.json)")
    ap.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    ap.add_argument("--out", default="fsaccept-comparison",
                    help="directory to write into (default: %(default)s)")
    ap.add_argument("--min-ratio", type=float, metavar="R",
                    help="exit 1 when a significant ratio makes B worse than A by more "
                         "than the factor R (0 < R <= 1; e.g. 0.9)")
    ap.add_argument("--allowed-signers", metavar="FILE",
                    help="verify each manifest's SSH signature against this file")
    args = ap.parse_args(argv)
    try:
        if args.min_ratio is not None and not (math.isfinite(args.min_ratio)
                                               and 0 < args.min_ratio <= 1):
            raise CompareError(f"--min-ratio {args.min_ratio}: a factor above 0, at most 1")
        a = load("A", args.run_a, args.allowed_signers)
        b = load("B", args.run_b, args.allowed_signers)
        pairs, alone = compare_tests(a.tests, b.tests)
        c = Comparison(a, b, pairs, alone)
        written = write(c, Path(args.out), args.min_ratio)
    except CompareError as err:
        print(prefixed_lines("fsaccept compare: error: ", err), file=sys.stderr)
        return 2
    for line in summary_lines(c, args.min_ratio):
        print(one_line(line))
    for path in written:
        print(f"compare: wrote {one_line(path)}")
    gate = args.min_ratio is not None and any(p.below(args.min_ratio) for p in c.pairs)
    return 1 if gate else 0


if __name__ == "__main__":
    raise SystemExit(main())
