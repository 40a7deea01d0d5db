"""Nightly regression: every figure against its own noise over the last N sessions.

(About 670 lines, one command's whole story: settings, comparison, unit checks, summary
and the ``fsaccept nightly`` command line; storage is :mod:`.results_db`, plots
:mod:`.plots`.)

Storage is ReFrame's own results database (``RFM_ENABLE_RESULTS_STORAGE=1``,
``RFM_SQLITE_DB_FILE``): ``scripts/nightly`` runs ReFrame with it on and
tags each session with ``--session-extras fsaccept_kind=nightly,fsaccept_system=<system>``.
The comparison is ReFrame's ``--performance-compare`` query, run through its
Python API (:func:`reframe.frontend.reporting.performance_compare`)::

    <this session's uuid>/<window>?<the last N nightly sessions>/median:/+pref

so ``pdiff`` is (now − median) / median in %.  Tonight's figure is one new
measurement; the last N sessions' figures (one per session: the mean of its
repetitions) are its history.  With at least :data:`MIN_HISTORY` of them, and a spread,
a figure whose unit is a rate (MiB/s, IOPS, ops/s) regresses when it fell below the
history's one-sided prediction bound (``nightly.confidence``, :data:`NOISE_CONFIDENCE`)
(:meth:`fsaccept.core.statistics.Spread.prediction_bound`), a time (s, ms, us) when it
rose above it: a drop within the test's own noise raises no alarm, and a steady test's
real drop does, however small.  With a shorter history, or one without spread, the
fixed tolerance judges: a drop of more than it below the median.

The reference file's optional ``nightly:`` section::

    nightly:
      sessions: 7           # median of the last 7 stored nightly sessions
      tolerance: 0.1        # without a spread to judge by: a drop of more than 10 %
      confidence: 0.99      # the noise bound's (one-sided) confidence
      trend_sessions: 30    # sessions in the trend plots
      tests:                # keys replacing those of tests.<name> (smaller sizes)
        ior_write_bandwidth: {segments: 512}

Pure functions take and return plain data; :class:`Store` is the thin layer
over ReFrame's storage API.  ``fsaccept nightly compare`` draws the plots in child
processes forked at its start (:class:`PlotAhead`): matplotlib's import overlaps
ReFrame's and the comparison (``bench/bench_trends.py`` times the whole process).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import multiprocessing
import os
import statistics
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fsaccept.core import inputs
from fsaccept.core.formatting import format_number, one_line, prefixed_lines
# Units where smaller is better; every other unit is a rate (larger is better).
from fsaccept.core.reference import TIME_UNITS
from fsaccept.core.statistics import Spread
from fsaccept.reporting.case import TypedReport, case_of, typed
from fsaccept.reporting.plots import TrendPlotter, plot_name
from fsaccept.reporting.point import Point
from fsaccept.reporting import manifest
from fsaccept.reporting import runreport as rep
from fsaccept.reporting.signoff.common import RunFiles
from fsaccept.reporting.verdict import verdict_line
# NightlyError is raised here too (and caught by callers as trends.NightlyError).
from fsaccept.reporting.results_db import NightlyError, Store, check_results_db
from fsaccept.suite.reference import ReferenceError, load_reference, nightly_merged

DEFAULT_SESSIONS = 7
DEFAULT_TOLERANCE = 0.1
DEFAULT_TREND_SESSIONS = 30
#: The fewest past sessions whose spread judges a figure (fewer: the tolerance).
MIN_HISTORY = 3
#: The one-sided confidence of the noise bound unless ``nightly.confidence`` says: a
#: figure as steady as its history crosses it one night in a hundred.  Higher gives
#: fewer false alarms over many figures, and with few sessions a bound far away
#: (Student's t for 7 sessions at 0.999 is 5.2, at 0.99 3.1).
NOISE_CONFIDENCE = 0.99


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class NightlySettings:
    sessions: int = DEFAULT_SESSIONS
    tolerance: float = DEFAULT_TOLERANCE
    trend_sessions: int = DEFAULT_TREND_SESSIONS
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    confidence: float = NOISE_CONFIDENCE


def nightly_settings(raw: dict[str, Any]) -> NightlySettings:
    """The ``nightly:`` section of a (schema-validated) reference file."""
    n = raw.get("nightly") or {}
    return NightlySettings(sessions=n.get("sessions", DEFAULT_SESSIONS),
                           tolerance=n.get("tolerance", DEFAULT_TOLERANCE),
                           trend_sessions=n.get("trend_sessions", DEFAULT_TREND_SESSIONS),
                           tests=n.get("tests") or {},
                           confidence=n.get("confidence", NOISE_CONFIDENCE))


def nightly_reference(raw: dict[str, Any], source: str = "reference") -> dict[str, Any]:
    """The reference file for a nightly run: ``tests.<name>`` updated with
    ``nightly.tests.<name>`` (:func:`fsaccept.suite.reference.nightly_merged`, which every
    reference check applies too).  An override of a test the file lacks is an error."""
    try:
        return nightly_merged(raw, source)
    except ReferenceError as err:
        raise NightlyError(str(err)) from None


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Comparison:
    test: str
    sysenv: str
    figure: str
    unit: str
    now: float
    median: float | None
    pdiff: float | None  # (now - median) / median, in %
    sessions: int  # how many past sessions the median is over
    smaller_is_better: bool = False
    #: The figure in each past session compared with (the mean of its repetitions).
    history: tuple[float, ...] = ()
    #: The noise bound's one-sided confidence (``nightly.confidence``).
    confidence: float = NOISE_CONFIDENCE

    @property
    def noise_bound(self) -> float | None:
        """The history's prediction bound (at :attr:`confidence`, one-sided, on the
        side that is worse); None with fewer than :data:`MIN_HISTORY` sessions or no
        spread among them: the tolerance judges then."""
        if len(self.history) < MIN_HISTORY or statistics.pstdev(self.history) == 0:
            return None
        return Spread(self.history).prediction_bound(self.smaller_is_better, self.confidence)

    def regressed(self, tolerance: float) -> bool:
        if self.median is None:
            return False
        bound = self.noise_bound
        if bound is not None:
            return self.now > bound if self.smaller_is_better else self.now < bound
        if self.median == 0 or self.pdiff is None or math.isnan(self.pdiff):
            # No relative change from 0: any move the wrong way is a regression.
            return self.now > self.median if self.smaller_is_better else self.now < self.median
        limit = 100.0 * tolerance
        if self.smaller_is_better:
            return self.pdiff > limit
        return self.pdiff < -limit

    def describe(self, tolerance: float) -> str:
        if self.median is None:
            return (f"{self.test} {self.figure}: {format_number(self.now)} {self.unit}; no history "
                    "to compare with")
        if self.median == 0 or self.pdiff is None or math.isnan(self.pdiff):
            return (f"{self.test} {self.figure}: {format_number(self.now)} {self.unit}, median "
                    f"{format_number(self.median)} {self.unit} of {_sessions(self.sessions)}")
        direction = "above" if self.pdiff > 0 else "below"
        said = (f"{self.test} {self.figure}: {format_number(self.now)} {self.unit} is "
                f"{abs(self.pdiff or 0):.2f} % {direction} the median {format_number(self.median)} "
                f"{self.unit} of {_sessions(self.sessions)}")
        bound = self.noise_bound
        if bound is None:
            return f"{said} (tolerance {100 * tolerance:g} %{self._why_tolerance()})"
        return (f"{said} ({self.noise_text()}: "
                f"{'beyond' if self.regressed(tolerance) else 'within'} the noise)")

    def noise_text(self) -> str:
        """``noise bound 1,790 MiB/s: 99 % of nights as steady as the last 7 (2,000 ±
        31 MiB/s) stay above it``."""
        bound, hist = self.noise_bound, Spread(self.history)
        side = "below" if self.smaller_is_better else "above"
        return (f"noise bound {format_number(bound)} {self.unit}: "
                f"{100 * self.confidence:g} % of nights as steady as the last "
                f"{hist.n} ({format_number(hist.mean)} ± {format_number(hist.sd)} "
                f"{self.unit}) stay {side} it")

    def _why_tolerance(self) -> str:
        if len(self.history) < MIN_HISTORY:
            return f"; fewer than {MIN_HISTORY} sessions give no spread to judge by"
        return "; the sessions' figures have no spread to judge by"


def _sessions(n: int) -> str:
    return f"the last {n} session{'s' if n != 1 else ''}"


def smaller_is_better(unit: str, lower: float | None, upper: float | None) -> bool:
    """A figure judged by an upper bound only (a latency, a count of outliers), or
    without bounds but in a time unit, is better when smaller."""
    if lower is None and upper is not None:
        return True
    if lower is not None:
        return False
    return unit in TIME_UNITS


@dataclass(frozen=True)
class CurrentFigure:
    name: str
    sysenv: str
    pvar: str
    unit: str
    value: float
    lower: float | None = None
    upper: float | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.name, self.sysenv, self.pvar, self.unit)


def comparisons_from_table(table: list[Any], sessions: int,
                           current: list[CurrentFigure]) -> list[Comparison]:
    """Comparisons from ReFrame's ``performance_compare`` table (header row first:
    name, sysenv, pvar, punit, 'pval (median) (lhs)', 'pval (median) (rhs)', ...,
    'pdiff (%)'), plus figures of the current session that have no history.
    ``current`` (this session's figures) also gives each figure's direction."""
    if not table:
        raise NightlyError("ReFrame's performance comparison returned no table")
    header = list(table[0])
    col = {name: i for i, name in enumerate(header)}
    try:
        i_name, i_env, i_var, i_unit = (col["name"], col["sysenv"], col["pvar"], col["punit"])
        i_lhs = next(i for h, i in col.items() if h.startswith("pval") and h.endswith("(lhs)"))
        i_rhs = next(i for h, i in col.items() if h.startswith("pval") and h.endswith("(rhs)"))
        i_diff = col["pdiff (%)"]
    except (KeyError, StopIteration):
        raise NightlyError(f"unexpected performance-comparison columns: {header}") from None
    by_key = {f.key: f for f in current}
    out, seen = [], set()
    for row in table[1:]:
        key = (row[i_name], row[i_env], row[i_var], row[i_unit])
        rhs = row[i_rhs]
        median = float(rhs) if isinstance(rhs, (int, float)) else None
        diff = row[i_diff] if isinstance(row[i_diff], (int, float)) else None
        cur = by_key.get(key)
        out.append(Comparison(
            test=key[0], sysenv=key[1], figure=key[2], unit=key[3], now=float(row[i_lhs]),
            median=median, pdiff=diff, sessions=sessions if median is not None else 0,
            smaller_is_better=smaller_is_better(key[3], cur.lower if cur else None,
                                                cur.upper if cur else None)))
        seen.add(key)
    for f in current:
        if f.key not in seen:
            out.append(Comparison(f.name, f.sysenv, f.pvar, f.unit, float(f.value), None, None,
                                  0, smaller_is_better(f.unit, f.lower, f.upper)))
    return sorted(out, key=lambda c: (c.test, c.figure))


def regressions(comparisons: list[Comparison], tolerance: float) -> list[Comparison]:
    return [c for c in comparisons if c.regressed(tolerance)]


def current_figures(report: TypedReport | dict[str, Any]) -> list[CurrentFigure]:
    """Every measured figure of a run report (typed at the door, once), with its bounds."""
    out = []
    for tc in typed(report).cases:
        for f in tc.figures:
            if f.value is not None:
                out.append(CurrentFigure(
                    tc.name, f"{tc.get('system')}:{tc.get('partition')}+{tc.get('environ')}",
                    f.name, f.unit, f.value, f.lower, f.upper))
    return out


# --------------------------------------------------------------------------- trends


def trend_series(testcases: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[Point]]:
    """(test, figure, unit) → points in time order, from stored test cases
    (each a run-report test case as ReFrame's storage returns it)."""
    series: dict[tuple[str, str, str], list[Point]] = {}
    for tc in map(case_of, testcases):
        t = tc.job.completion_time or 0.0
        for f in tc.figures:
            if f.value is None:
                continue
            limit = None
            if f.reference and f.lower is not None:
                limit = f.reference * (1 + f.lower)
            series.setdefault((tc.name, f.name, f.unit), []).append(
                Point(t, tc.get("session_uuid", ""), float(f.value), limit))
    for pts in series.values():
        pts.sort(key=lambda p: p.time)
    return series


def last_sessions(points: list[Point], n: int) -> list[Point]:
    """Points of the last ``n`` distinct sessions."""
    keep = []
    for p in reversed(points):
        if p.session not in keep:
            keep.append(p.session)
        if len(keep) == n:
            break
    wanted = set(keep)
    return [p for p in points if p.session in wanted]


def summary_markdown(system: str, session: str, comparisons: list[Comparison],
                     settings: NightlySettings, plots: list[str],
                     verdict_lines: list[str]) -> str:
    """The short nightly summary."""
    regs = regressions(comparisons, settings.tolerance)
    lines = [f"# Nightly {system}: {'REGRESSION' if regs else 'no regression'}", "",
             f"Session `{session}`; each figure against its noise over the last "
             f"{settings.sessions} nightly sessions "
             f"({max((c.sessions for c in comparisons), default=0)} available): beyond the "
             f"{100 * settings.confidence:g} % one-sided prediction bound of their figures is a "
             f"regression; with fewer than {MIN_HISTORY} sessions, or no spread, a change of "
             f"more than the tolerance ({100 * settings.tolerance:g} %) from their median.",
             "", "| Test | Figure | Now | Median | Change | Noise bound | |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in comparisons:
        change = f"{c.pdiff:+.2f} %" if c.pdiff is not None and math.isfinite(c.pdiff) else "—"
        flag = "REGRESSION" if c.regressed(settings.tolerance) else (
            "no history" if c.median is None else "ok")
        median = f"{format_number(c.median)} {c.unit}" if c.median is not None else "—"
        bound = c.noise_bound
        noise = (f"{'≤' if c.smaller_is_better else '≥'} {format_number(bound)} {c.unit} "
                 f"(n = {len(c.history)})" if bound is not None else
                 "— (tolerance)" if c.median is not None else "—")
        lines.append(f"| {c.test} | {c.figure} | {format_number(c.now)} {c.unit} | {median} | "
                     f"{change} | {noise} | {flag} |")
    if verdict_lines:
        lines += ["", "Verdicts of this session:", ""] + [f"- {v}" for v in verdict_lines]
    if plots:
        lines += ["", f"## Trends (last {settings.trend_sessions} sessions)", ""]
        lines += [f"![{p}](trends/{p})" for p in plots]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- storage


def _finite(value: Any) -> bool:
    """A number a figure can be: int or float (not bool), finite (a huge int is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def damaged_figures(testcases: list[dict[str, Any]]) -> list[str]:
    """Everything in stored test cases that is not a figure ReFrame's comparison and the
    trend plots can take, each as ``test figure: value stored by session S``: a value
    that is not a finite number (a string, NaN, infinity; None is "no value"), a
    reference or bound that is not a number, a record that is not ReFrame's
    ``[value, ref, lower, upper, unit, ...]``."""
    out = []
    for tc in testcases:
        name, session = tc.get("name"), tc.get("session_uuid", "?")
        t = tc.get("job_completion_time_unix")
        perf = tc.get("perfvalues") or {}
        if not isinstance(name, str) or not isinstance(perf, dict) or \
                (t is not None and not _finite(t)):
            out.append(f"a test case stored by session {session} is not ReFrame's (name "
                       f"{_short(name)}, completion time {_short(t)})")
            continue
        for key, vals in perf.items():
            where = f"{name} {str(key).rsplit(':', 1)[-1]}"
            if not isinstance(vals, list) or len(vals) < 5 or not isinstance(vals[4], str):
                out.append(f"{where}: {_short(vals)} stored by session {session}")
            elif vals[0] is not None and not _finite(vals[0]):
                out.append(f"{where}: {_short(vals[0])} stored by session {session}")
            elif any(v is not None and not _finite(v) for v in vals[1:4]):
                out.append(f"{where}: reference and bounds {_short(vals[1:4])} stored by "
                           f"session {session}")
    return out


def unit_changes(stored: list[dict[str, Any]], current: list[CurrentFigure]) -> list[str]:
    """'IORWriteBandwidth write_bandwidth: stored in MB/s, today in MiB/s' for each figure
    of today's session whose history is in another unit."""
    units: dict[tuple[str, str], set[str]] = {}
    for tc in stored:
        for key, vals in (tc.get("perfvalues") or {}).items():
            if isinstance(vals, (list, tuple)) and len(vals) >= 5:
                units.setdefault((str(tc.get("name")), str(key).rsplit(":", 1)[-1]),
                                 set()).add(str(vals[4]))
    out = []
    for f in current:
        before = units.get((f.name, f.pvar), set()) - {f.unit}
        if before:
            out.append(f"{f.name} {f.pvar}: stored in {', '.join(sorted(before))}, "
                       f"today in {f.unit}")
    return out


def _refuse_damaged(store: Store, problems: list[str]) -> None:
    # A stored figure that is not a number was never measured (a live run makes such a
    # figure INVALID): the history is damaged, and no comparison with it is a verdict.
    if problems:
        raise NightlyError(f"{store.db_file}: stored figures that are not numbers (a damaged "
                           "results database?): " + "; ".join(problems[:5])
                           + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))


def _of_sessions(testcases: list[dict[str, Any]], uuids: set[str]) -> list[dict[str, Any]]:
    """The test cases of these sessions (ReFrame's run reports name each case's session;
    one that does not is kept: the query that fetched it chose its session)."""
    return [tc for tc in testcases if tc.get("session_uuid", next(iter(uuids), "")) in uuids]


def nightly_compare(store: Store, system: str, session: str,
                    report: TypedReport | dict[str, Any],
                    settings: NightlySettings, *,
                    all_sessions: list[tuple[str, float]] | None = None,
                    stored: list[dict[str, Any]] | None = None,
                    ) -> tuple[list[Comparison], list[tuple[str, float]]]:
    """This session against the median of the last ``settings.sessions`` before it.
    ``all_sessions`` (the system's nightly sessions) and ``stored`` (test cases of at
    least this session and those before it in the comparison) when already fetched.
    Every stored figure compared is checked first: NightlyError naming any that is not
    a number (ReFrame's comparison would fail on it, or compare it)."""
    report = typed(report)
    all_sessions = store.sessions(system) if all_sessions is None else all_sessions
    mine = [s for s in all_sessions if s[0] == session]
    if not mine:
        raise NightlyError(f"session {session} is not in the results database "
                           f"{store.db_file} as a nightly session of system {system!r}")
    previous = [s for s in all_sessions if s[1] < mine[0][1]][-settings.sessions:]
    compared = {u for u, _ in previous + mine}
    stored = store.testcases(previous + mine) if stored is None else stored
    _refuse_damaged(store, damaged_figures(_of_sessions(stored, compared)))
    changed = unit_changes(_of_sessions(stored, {u for u, _ in previous}),
                           current_figures(report))
    if changed:  # ReFrame compares by unit: the history would silently be "none"
        raise NightlyError(f"{store.db_file}: figures stored in another unit than today's, "
                           "not compared: " + "; ".join(changed[:5])
                           + (f" (+{len(changed) - 5} more)" if len(changed) > 5 else ""))
    if previous:
        table = store.compare(session, previous)
    else:
        table = [["name", "sysenv", "pvar", "punit", "pval (median) (lhs)",
                  "pval (median) (rhs)", "pdiff (%)"]]
    comps = comparisons_from_table(table, len(previous), current_figures(report))
    history = session_figures(_of_sessions(stored, {u for u, _ in previous}))
    return [dataclasses.replace(c, history=history.get((c.test, c.figure, c.unit), ()),
                                confidence=settings.confidence)
            if c.median is not None else c for c in comps], all_sessions


def session_figures(testcases: list[dict[str, Any]]) -> dict[tuple[str, str, str],
                                                            tuple[float, ...]]:
    """(test, figure, unit) → its figure in each session, in time order: the mean of the
    session's repetitions (a session is one measurement of the history)."""
    out = {}
    for key, points in trend_series(testcases).items():
        by_session: dict[str, list[float]] = {}
        for p in points:
            by_session.setdefault(p.session, []).append(p.value)
        out[key] = tuple(statistics.fmean(v) for v in by_session.values())
    return out


def draw_plots(jobs: list[tuple[Any, ...]]) -> list[bytes]:
    """PNG of each trend plot, ``jobs`` holding :meth:`TrendPlotter.plot`'s arguments."""
    plotter = TrendPlotter()
    return [plotter.plot(*job) for job in jobs]


def _plot_worker(conn: Any) -> None:
    """The child of :class:`PlotAhead`: matplotlib imported and the figure made at once,
    then the plots it is sent drawn."""
    try:
        plotter = TrendPlotter()
        jobs = conn.recv()
        conn.send((True, [plotter.plot(*job) for job in jobs]))
    except EOFError:  # the parent stopped before plotting (bad input)
        pass
    except Exception as err:  # noqa: BLE001 - told to the parent, which exits 2
        conn.send((False, f"{type(err).__name__}: {err}"))


class PlotAhead:
    """Draws the trend plots in child processes forked before ReFrame and polars are
    imported: matplotlib's import and set-up (a third of ``fsaccept nightly compare``)
    run while this process reads the history and compares, instead of after it, and
    the plots are shared between them (``workers``, at most one per other CPU: a
    second child on a two-CPU machine imports matplotlib once more on a CPU this
    process needs, and was slower as soon as anything else ran).

    Only forked from a process without threads that has not imported polars yet (a fork
    of polars' thread pool is unsafe), where fork exists and a second CPU is there:
    otherwise (tests, other platforms) :meth:`draw` draws here, with the same
    :class:`TrendPlotter`."""

    def __init__(self, workers: int = 2) -> None:
        self._children: list[tuple[Any, Any]] = []
        self._drawn = False
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        # One CPU is this process's; each other CPU can take a share of the plots.
        workers = min(workers, cpus - 1)
        if workers < 1 or "polars" in sys.modules or threading.active_count() > 1 or \
                "fork" not in multiprocessing.get_all_start_methods():
            return
        ctx = multiprocessing.get_context("fork")
        sys.stdout.flush()  # nothing buffered is written twice by a child
        sys.stderr.flush()
        for _ in range(workers):
            conn, child = ctx.Pipe()
            proc = ctx.Process(target=_plot_worker, args=(child,), daemon=True,
                               name="fsaccept-trend-plots")
            proc.start()
            child.close()
            self._children.append((proc, conn))

    @property
    def forked(self) -> int:
        """How many child processes draw the plots (0: this one does)."""
        return len(self._children)

    def draw(self, jobs: list[tuple[Any, ...]]) -> list[bytes]:
        if not self._children:
            return draw_plots(jobs)
        self._drawn = True
        n = len(self._children)
        for i, (_, conn) in enumerate(self._children):
            try:
                conn.send(jobs[i::n])
            except OSError:  # the child has ended: its message (or EOF) says why
                pass
        parts = []
        for proc, conn in self._children:
            try:
                ok, result = conn.recv()
            except EOFError:
                proc.join(5)
                raise NightlyError(f"the trend plots' process ended without plotting (exit "
                                   f"{proc.exitcode})") from None
            if not ok:
                raise NightlyError(f"the trend plots failed: {result}")
            parts.append(result)
        out: list[bytes] = [b""] * len(jobs)
        for i, part in enumerate(parts):
            out[i::n] = part
        return out

    def close(self) -> None:
        for proc, conn in self._children:
            conn.close()
            # Not asked to draw (bad input, an error): it holds nothing, ended at once.
            if not self._drawn:
                proc.terminate()
        for proc, _ in self._children:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        self._children = []

    def __enter__(self) -> PlotAhead:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def write_trends(store: Store, out_dir: Path, system: str, session: str,
                 report: TypedReport | dict[str, Any], settings: NightlySettings,
                 verdict_lines: list[str] | None = None,
                 draw: Any = None) -> tuple[Path, list[Comparison]]:
    """Compare, plot the last ``trend_sessions`` sessions, write ``summary.md``.
    ``draw`` (jobs -> PNGs, default :func:`draw_plots`): e.g. :meth:`PlotAhead.draw`."""
    all_sessions = store.sessions(system)
    started = dict(all_sessions).get(session)
    upto = [s for s in all_sessions if started is not None and s[1] <= started]
    # One fetch for both the comparison's sessions and the plotted ones.
    stored = store.testcases(upto[-max(settings.trend_sessions, settings.sessions + 1):])
    comps, _ = nightly_compare(store, system, session, report, settings,
                               all_sessions=all_sessions, stored=stored)
    plotted = {u for u, _ in upto[-settings.trend_sessions:]}
    testcases = _of_sessions(stored, plotted)
    _refuse_damaged(store, damaged_figures(testcases) + [
        f"{c.test} {c.figure}: median {c.median!r} of the last {c.sessions} sessions"
        for c in comps if c.median is not None and not math.isfinite(c.median)])
    series = trend_series(testcases)
    medians = {(c.test, c.figure): c.median for c in comps}
    (out_dir / "trends").mkdir(parents=True, exist_ok=True)
    jobs = [(test, figure, unit, last_sessions(pts, settings.trend_sessions),
             medians.get((test, figure))) for (test, figure, unit), pts in sorted(series.items())]
    plots = []
    for (test, figure, *_), png in zip(jobs, (draw or draw_plots)(jobs) if jobs else []):
        name = plot_name(test, figure)
        (out_dir / "trends" / name).write_bytes(png)
        plots.append(name)
    summary = out_dir / "summary.md"
    summary.write_text(summary_markdown(system, session, comps, settings, plots,
                                        verdict_lines or []))
    return summary, comps


# --------------------------------------------------------------------------- CLI


def _load_yaml(path: Path) -> dict[str, Any]:
    """A reference file, validated against its schema first (errors name the file and
    key), as the plain data the nightly settings are read from."""
    try:
        return load_reference(path).data  # read once: parsing it is most of its cost
    except ReferenceError as err:
        raise NightlyError(str(err)) from None


def _cmd_reference(args: argparse.Namespace) -> int:
    src, out = Path(args.reference), Path(args.output)
    if out.exists() and out.resolve() == src.resolve():
        raise NightlyError(f"-o {out}: that is the reference file itself: write the nightly "
                           "reference to another file")
    merged = nightly_reference(_load_yaml(src), str(src))
    text = (f"# Nightly reference derived from {src.resolve()} "
            "(tests.<name> updated with nightly.tests.<name>)\n"
            + yaml.safe_dump(merged, sort_keys=False))
    # Validated before it replaces anything: an invalid merge leaves no file behind.
    try:
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
    except OSError as err:
        raise NightlyError(f"-o {out}: cannot write there ({err.strerror or err})") from None
    try:
        load_reference(tmp)
    except ReferenceError as err:
        tmp.unlink()
        raise NightlyError(f"{src}: nightly.tests: the test entries with the nightly values "
                           f"are not valid: {str(err).replace(str(tmp), str(out))}") from None
    os.replace(tmp, out)
    print(out)
    return 0


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:  # also NaN
        raise argparse.ArgumentTypeError(f"{text}: a fraction between 0 and 1 (0.1 = 10 %)")
    return value


def _confidence(text: str) -> float:
    value = float(text)
    if not 0.5 < value < 1:  # also NaN
        raise argparse.ArgumentTypeError(f"{text}: a confidence above 0.5 and below 1 "
                                         "(0.99 = 99 %)")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: at least 1")
    return value


def _cmd_compare(args: argparse.Namespace) -> int:
    # Forked first, before ReFrame and polars are imported.
    with PlotAhead() as plots:
        return _compare(args, plots)


def _compare(args: argparse.Namespace, plots: PlotAhead) -> int:
    run_dir = os.path.dirname(os.path.abspath(args.run_report))
    reads = inputs.Reader(run_dir)
    run_report = typed(rep.read_run_report(reads, args.run_report))  # each case typed once
    settings = nightly_settings(_load_yaml(Path(args.reference)))
    if args.sessions:
        settings = dataclasses.replace(settings, sessions=args.sessions)
    if args.tolerance is not None:
        settings = dataclasses.replace(settings, tolerance=args.tolerance)
    if args.confidence is not None:
        settings = dataclasses.replace(settings, confidence=args.confidence)
    if not run_report.cases:
        raise NightlyError(f"{args.run_report}: no test ran; check nightly.tests in "
                           f"{args.reference} and the tests' reference_key")
    store = Store(args.db)
    session = run_report.info["uuid"]
    # A check's record rebuilt from the run's own files, as the sign-off rebuilds it.
    tests = rep.tests_of(run_report, files=RunFiles(
        reads, manifest.rebaser(run_report.record, run_dir)))
    verdict_lines = [verdict_line(t) for t in tests]
    out = Path(args.out)
    summary, comps = write_trends(store, out, args.system, session, run_report, settings,
                                  verdict_lines, draw=plots.draw)
    # Recorded text (names, units, reasons) folded: one line each (one_line).
    for c in comps:
        flag = "REGRESSION" if c.regressed(settings.tolerance) else "ok"
        print(f"nightly: {flag}: {one_line(c.describe(settings.tolerance))}")
    regs = regressions(comps, settings.tolerance)
    bad = [t for t in tests if t.verdict != rep.PASS]
    for t in bad:
        print(f"nightly: NOT PASS: {one_line(verdict_line(t))}")
    print(f"nightly: summary {one_line(summary)}")
    if regs:
        print("nightly: REGRESSION in " + one_line(", ".join(f"{c.test} {c.figure}"
                                                             for c in regs)))
        return 1
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fsaccept nightly",
                                 description="nightly regression against ReFrame's results storage")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("reference", help="write the nightly reference file (nightly sizes)")
    r.add_argument("reference", help="reference/<system>.yaml")
    r.add_argument("-o", "--output", required=True)
    c = sub.add_parser("compare", help="compare a stored nightly session with its history")
    c.add_argument("run_report", help="the session's ReFrame run report (--report-file)")
    c.add_argument("--db", required=True, help="ReFrame's results database (RFM_SQLITE_DB_FILE)")
    c.add_argument("--system", required=True)
    c.add_argument("--reference", required=True, help="reference file with the nightly: section")
    c.add_argument("--out", required=True, help="directory for summary.md and trends/")
    c.add_argument("--sessions", type=_count, help="override nightly.sessions")
    c.add_argument("--tolerance", type=_fraction,
                   help="override nightly.tolerance (a fraction: 0.1 = 10 %%)")
    c.add_argument("--confidence", type=_confidence,
                   help="override nightly.confidence (the noise bound's, one-sided: "
                        "0.99 = 99 %%)")
    d = sub.add_parser("check-db", help="exit 2 unless FILE is ReFrame's results database "
                       "(or does not exist yet)")
    d.add_argument("db")
    k = sub.add_parser("keys", help="the tests a nightly run selects (nightly.tests keys, "
                       "quoted and comma-separated; empty: the tests tagged nightly)")
    k.add_argument("reference")
    args = ap.parse_args(argv)
    try:
        if args.command == "check-db":
            check_results_db(args.db)
            return 0
        if args.command == "keys":
            tests = nightly_settings(_load_yaml(Path(args.reference))).tests
            print(",".join(repr(k) for k in tests))
            return 0
        return _cmd_reference(args) if args.command == "reference" else _cmd_compare(args)
    except (NightlyError, ValueError) as err:
        print(prefixed_lines("fsaccept.reporting.trends: ", err), file=sys.stderr)
        return 2
    except OSError as err:  # e.g. --out is a file, or a directory that cannot be made
        print(prefixed_lines("fsaccept.reporting.trends: ",
                             f"{err.filename or ''}: {err.strerror or err}"), file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 - exit 1 means "regression" to cron: never
        # let an unforeseen error (a traceback, exit 1) read as one.
        print(prefixed_lines("fsaccept.reporting.trends: error (not a regression): ",
                             f"{type(err).__name__}: {err}"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
