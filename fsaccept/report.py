"""The acceptance sign-off report, from ReFrame's own run report (``--report-file``).

Everything here reads the JSON run report that ReFrame writes; nothing is
parsed from benchmark output again.  The figures are ReFrame's performance
values (``perfvalues``: value, reference, lower, upper, unit, result), so a new
check needs no change here: whatever ``perf_variables`` it reports shows up.

Verdicts, per test case (:func:`verdict_of`):

- PASS: ReFrame's ``pass``;
- FAIL: failed in the ``performance`` phase (a figure below its threshold);
- INVALID: failed in ``sanity`` with ``INVALID:`` in the reason (the text
  after it is the reason shown);
- anything else is shown as what it is (ERROR in a phase, SKIPPED, NOT RUN
  because a dependency failed, ABORTED) and is never PASS.

A test repeated (``--repeat``, ``--reruns``, retries) is one row: its verdict
is the worst of its runs, its figures have n, mean, std, min and max.  The
overall verdict is ACCEPTED only if at least one test tagged ``acceptance`` ran,
every test (fixtures excepted: they are shown with the test that uses them) is
PASS, and all of them used the same reference file (one SHA-256); INCOMPLETE
when nothing failed but some tests were skipped (e.g. a benchmark is not
installed: each says why and how to fix it); NOT ACCEPTED otherwise.

The functions are pure (data in, data out) except :func:`load_run_report`,
:func:`job_script` and :func:`git_describe`, which read files.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import statistics
import subprocess
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

# The one way figures are printed (re-exported: templates and scripts use them from here).
from fsaccept.findings import figure_problem
from fsaccept.formatting import MB_PER_MIB, format_figure, format_number, mib_to_mb  # noqa: F401

PASS, FAIL, INVALID = "PASS", "FAIL", "INVALID"
ERROR, SKIPPED, NOT_RUN, ABORTED = "ERROR", "SKIPPED", "NOT RUN", "ABORTED"
#: Worst first: a repeated test takes the first of these that any run has.
VERDICT_ORDER = (ERROR, ABORTED, INVALID, FAIL, NOT_RUN, SKIPPED, PASS)
ACCEPTED, NOT_ACCEPTED, INCOMPLETE = "ACCEPTED", "NOT ACCEPTED", "INCOMPLETE"
#: A sign-off needs at least one test with this tag (a pre-flight check alone is not one).
ACCEPTANCE_TAG = "acceptance"

#: ``--repeat N`` adds this parameter to each test's name.
_REPEAT_PARAM = re.compile(r"\s+%\.?repeat_no=\d+")

#: Keys every run-report test case has that are ReFrame's, not the check's.
#: Anything else a check logs (``loggable=True``) is provenance and is shown.
RFM_KEYS = frozenset("""
    build_jobid build_stderr build_stdout dependencies_actual dependencies_conceptual
    environ fail_phase fail_reason fail_info fail_severe filename fixture
    job_completion_time job_completion_time_unix job_stderr job_stdout partition result
    run_index scheduler session_uuid time_compile time_performance time_run time_sanity
    time_setup time_total uuid outputdir job_exitcode job_nodelist job_submit_time jobid
    system build_locally build_time_limit descr display_name env_vars exclusive_access
    executable executable_opts extra_resources hashcode keep_files local maintainers
    max_pending_time modules name num_cpus_per_task num_gpus_per_node num_tasks
    num_tasks_per_core num_tasks_per_node num_tasks_per_socket perfvalues postbuild_cmds
    postrun_cmds prebuild_cmds prefix prerun_cmds readonly_files short_name sourcepath
    sourcesdir stagedir strict_check tags time_limit unique_name use_multithreading
    valid_prog_environs valid_systems variables basename sysenv
""".split())

#: Shown in rows of their own (deadline vs time run, bytes moved), not again.
SHOWN_KEYS = frozenset({"deadline_s", "time_run_s", "bytes_moved"})

#: Provenance keys shown in their own rows of a test's section, in this order.
CORE_KEYS = ("reference_key", "node_fraction", "partition_nodes", "usable_nodes",
             "num_nodes", "ranks_per_node", "rank_map", "target_dir", "target_fstype", "direct_io",
             "reference_path", "reference_sha256")


class RunReportError(ValueError):
    """A file that is not a usable ReFrame run report; the message names it."""


# --------------------------------------------------------------------------- figures


@dataclass(frozen=True)
class Figure:
    """One performance value of one test case, as ReFrame recorded it."""

    name: str
    value: float | None
    unit: str
    reference: float | None = None
    lower: float | None = None
    upper: float | None = None
    result: str | None = None

    @property
    def judged(self) -> bool:
        """Whether ReFrame judged it against a threshold (a reference of 0
        without bounds is ReFrame's "no reference")."""
        return self.lower is not None or self.upper is not None or bool(self.reference)

    @property
    def lower_limit(self) -> float | None:
        """Lowest passing value: reference × (1 + lower)."""
        if self.reference is None or self.lower is None:
            return None
        return float(Decimal(repr(self.reference)) * (1 + Decimal(repr(self.lower))))

    @property
    def upper_limit(self) -> float | None:
        if self.reference is None or self.upper is None:
            return None
        return float(Decimal(repr(self.reference)) * (1 + Decimal(repr(self.upper))))


def figures_of(testcase: dict[str, Any]) -> list[Figure]:
    """The figures of a run-report test case, in the order the check declared them.

    Keys are ``system:partition:name``; the name is the part after the last colon.
    """
    out = []
    for key, values in (testcase.get("perfvalues") or {}).items():
        if not isinstance(values, (list, tuple)) or len(values) < 5:
            raise RunReportError(f"perfvalues[{key!r}] of {testcase.get('name')!r}: expected "
                                 f"[value, reference, lower, upper, unit, result], got {values!r}")
        value, ref, lower, upper, unit, *rest = values
        out.append(Figure(name=key.rsplit(":", 1)[-1], value=_num(value), unit=unit or "",
                          reference=_num(ref), lower=_num(lower), upper=_num(upper),
                          result=rest[0] if rest else None))
    return out


def _num(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def format_threshold(fig: Figure) -> str:
    """'≥ 45 MiB/s (50 − 10 %)'; '—' for a figure without threshold."""
    if not fig.judged:
        return "—"
    parts = []
    if fig.lower_limit is not None:
        tol = f" − {format_number(round(-fig.lower * 100, 6))} %" if fig.lower else ""
        parts.append(f"≥ {format_number(fig.lower_limit)} {fig.unit} "
                     f"({format_number(fig.reference)}{tol})")
    if fig.upper_limit is not None:
        tol = f" + {format_number(round(fig.upper * 100, 6))} %" if fig.upper else ""
        parts.append(f"≤ {format_number(fig.upper_limit)} {fig.unit} "
                     f"({format_number(fig.reference)}{tol})")
    if not parts:
        parts.append(f"{format_number(fig.reference)} {fig.unit}")
    return ", ".join(parts)


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
            out.append(f"{f.name} {format_number(f.value)} {f.unit} below the threshold "
                       f"{format_number(f.lower_limit)} {f.unit}")
        elif f.upper_limit is not None and f.value is not None and f.value > f.upper_limit:
            out.append(f"{f.name} {format_number(f.value)} {f.unit} above the limit "
                       f"{format_number(f.upper_limit)} {f.unit}")
        else:
            out.append(f"{f.name} {format_number(f.value)} {f.unit} failed its reference")
    return out


#: Units of counts, which may be 0 (``outlier_nodes``); every other figure is a rate or a
#: time, which a test that did I/O cannot measure as 0.
COUNT_UNITS = frozenset({"nodes", ""})


def bogus_figures(figures: list[Figure]) -> list[str]:
    """'write_bandwidth -1987.01 MiB/s is negative' for each figure that cannot have
    been measured (not finite, negative, 0 for a rate or a time): never PASS or FAIL."""
    out = []
    for f in figures:
        if f.value is None:
            continue
        why = figure_problem(f.value, io_done=f.unit not in COUNT_UNITS)
        if why:
            out.append(f"{f.name} {f.value!r} {f.unit}: {why}, not a measurement")
    return out


def verdict_of(testcase: dict[str, Any]) -> Verdict:
    """PASS, FAIL, INVALID, or what else happened, with the reason (one line
    unless it is an INVALID reason, which is kept whole). A run report that carries a
    figure no benchmark can measure (NaN, negative...) makes its test INVALID."""
    result = testcase.get("result")
    phase = testcase.get("fail_phase")
    reason = testcase.get("fail_reason")
    if result == "pass" or (result == "fail" and phase == "performance"):
        bogus = bogus_figures(figures_of(testcase))
        if bogus:
            return Verdict(INVALID, "; ".join(bogus))
    if result == "pass":
        return Verdict(PASS)
    if result == "fail" and phase == "performance":
        failed = figure_failures(figures_of(testcase))
        return Verdict(FAIL, "; ".join(failed) or _first_line(reason))
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
                       or "skipped by ReFrame (see ReFrame's output)")
    if result == "abort":
        return Verdict(ABORTED, f"aborted in {phase or 'an unknown phase'}"
                       + (f": {_first_line(reason)}" if reason else ""))
    return Verdict(ERROR, f"ReFrame result {result!r}")


def worst(verdicts: list[str]) -> str:
    for v in VERDICT_ORDER:
        if v in verdicts:
            return v
    return ERROR


# --------------------------------------------------------------------------- tests


@dataclass(frozen=True)
class Stats:
    n: int
    mean: float
    std: float | None  # sample standard deviation; None for n = 1
    min: float
    max: float


def stats_of(values: list[float]) -> Stats | None:
    if not values:
        return None
    return Stats(n=len(values), mean=statistics.fmean(values),
                 std=statistics.stdev(values) if len(values) > 1 else None,
                 min=min(values), max=max(values))


@dataclass
class FigureRow:
    """One figure of one test over all its runs."""

    name: str
    unit: str
    samples: list[Figure]

    @property
    def values(self) -> list[float]:
        return [f.value for f in self.samples if f.value is not None]

    @property
    def value(self) -> float | None:
        """The figure: the only value, or the mean of repeated runs."""
        vals = self.values
        if not vals:
            return None
        return vals[0] if len(vals) == 1 else statistics.fmean(vals)

    @property
    def stats(self) -> Stats | None:
        return stats_of(self.values)

    @property
    def threshold(self) -> Figure:
        return self.samples[-1]

    @property
    def failed(self) -> bool:
        return any(f.result == "fail" for f in self.samples)


@dataclass
class Test:
    """One test (repeats grouped) with its figures, provenance and fixtures."""

    name: str
    cases: list[dict[str, Any]]
    verdicts: list[Verdict]
    fixtures: list[dict[str, Any]] = field(default_factory=list)
    figures: list[FigureRow] = field(default_factory=list)

    @property
    def case(self) -> dict[str, Any]:
        """The last run of the test (the one a retry ended with)."""
        return self.cases[-1]

    @property
    def verdict(self) -> str:
        return worst([v.verdict for v in self.verdicts])

    @property
    def reason(self) -> str:
        reasons = []
        for i, v in enumerate(self.verdicts):
            if v.verdict != PASS and v.reason:
                prefix = f"run {i + 1}: " if len(self.verdicts) > 1 else ""
                if prefix + v.reason not in reasons:
                    reasons.append(prefix + v.reason)
        return "; ".join(reasons)

    @property
    def nodes(self) -> int | None:
        n = self.case.get("num_nodes")
        if isinstance(n, int) and n > 0:
            return n
        nodelist = self.case.get("job_nodelist") or []
        return len(nodelist) or None

    @property
    def partition_nodes(self) -> int | None:
        n = self.case.get("partition_nodes")
        return n if isinstance(n, int) and n > 0 else None

    @property
    def node_fraction(self) -> float | None:
        f = self.case.get("node_fraction")
        return f if isinstance(f, (int, float)) and f > 0 else None

    @property
    def ranks_per_node(self) -> int | None:
        for key in ("ranks_per_node", "num_tasks_per_node"):
            v = self.case.get(key)
            if isinstance(v, int) and v > 0:
                return v
        return None

    @property
    def nodes_text(self) -> str:
        """'4 of 4 (100 %; 0.9 asked)'."""
        n = self.nodes
        if n is None:
            return "—"
        text = str(n)
        total = self.partition_nodes
        if total:
            text += f" of {total} ({format_number(round(100 * n / total, 1))} %"
            if self.node_fraction is not None:
                text += f"; {format_number(self.node_fraction)} asked"
            text += ")"
        return text

    @property
    def tags(self) -> list[str]:
        return sorted(self.case.get("tags") or [])


def test_key(testcase: dict[str, Any]) -> tuple[str, str, str, str]:
    """What identifies a test across repeats: name without ``%repeat_no=N``, system,
    partition, environment."""
    name = _REPEAT_PARAM.sub("", testcase.get("name", ""))
    return (name, testcase.get("system", ""), testcase.get("partition", ""),
            testcase.get("environ", ""))


def all_testcases(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every test case of every run (retries and reruns), in run order."""
    return [tc for run in report.get("runs", []) for tc in run.get("testcases", [])]


def _fixture_key(dep: Any) -> tuple[str, str] | None:
    """(unique_name, 'system:partition') of a ``dependencies_actual`` entry."""
    if isinstance(dep, (list, tuple)) and len(dep) >= 2:
        return str(dep[0]), str(dep[1])
    return None


def tests_of(report: dict[str, Any]) -> list[Test]:
    """The report's tests (non-fixtures), repeats grouped, each with the fixtures
    it depends on (e.g. the dataset a read test reads), in the order ReFrame ran them."""
    cases = all_testcases(report)
    by_unique: dict[tuple[str, str], dict[str, Any]] = {}
    for tc in cases:
        by_unique[(tc.get("unique_name") or tc.get("name", ""),
                   f"{tc.get('system')}:{tc.get('partition')}")] = tc
    groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for tc in cases:
        if tc.get("fixture"):
            continue
        groups.setdefault(test_key(tc), []).append(tc)
    tests = []
    for key, group in groups.items():
        fixtures: list[dict[str, Any]] = []
        for tc in group:
            for dep in tc.get("dependencies_actual") or []:
                k = _fixture_key(dep)
                fx = by_unique.get(k) if k else None
                if fx is not None and fx not in fixtures:
                    fixtures.append(fx)
        rows: dict[str, FigureRow] = {}
        for tc in group:
            for fig in figures_of(tc):
                rows.setdefault(fig.name, FigureRow(fig.name, fig.unit, [])).samples.append(fig)
        verdicts = [_with_dependency_reason(verdict_of(tc), fixtures) for tc in group]
        tests.append(Test(name=key[0], cases=group, verdicts=verdicts,
                          fixtures=fixtures, figures=list(rows.values())))
    return tests


def _with_dependency_reason(v: Verdict, fixtures: list[dict[str, Any]]) -> Verdict:
    """A test not run because a fixture failed says which and why."""
    if v.verdict != NOT_RUN:
        return v
    failed = []
    for fx in fixtures:
        fv = verdict_of(fx)
        if fv.verdict != PASS:
            failed.append(f"{fx.get('display_name') or fx.get('name')} is {fv.verdict}"
                          + (f": {fv.reason}" if fv.reason else ""))
    return Verdict(NOT_RUN, "; ".join(failed)) if failed else v


def overall_verdict(tests: list[Test]) -> tuple[str, list[str]]:
    """ACCEPTED only if there is a test and every test is PASS; INCOMPLETE if the
    only tests that did not pass were skipped; else NOT ACCEPTED.  With, for each
    test that did not pass, 'name: VERDICT (reason)'."""
    if not tests:
        return NOT_ACCEPTED, ["no test ran"]
    blocking = [f"{t.name}: {t.verdict}" + (f" ({t.reason})" if t.reason else "")
                for t in tests if t.verdict != PASS]
    skipped = [t for t in tests if t.verdict == SKIPPED]
    if skipped and len(skipped) == len(blocking):
        return INCOMPLETE, [f"{len(skipped)} of {len(tests)} tests did not run"] + blocking
    shas = sorted({tc.get("reference_sha256") for t in tests for tc in t.cases + t.fixtures
                   if tc.get("reference_sha256")})
    if len(shas) > 1:
        blocking.append(f"the tests used {len(shas)} different reference files (SHA-256 "
                        f"{', '.join(s[:12] for s in shas)}): the reference changed during "
                        "the run")
    if not any(ACCEPTANCE_TAG in t.tags for t in tests):
        blocking.append(f"no test tagged {ACCEPTANCE_TAG!r} ran (only: "
                        f"{', '.join(t.name for t in tests)})")
    return (NOT_ACCEPTED, blocking) if blocking else (ACCEPTED, [])


# --------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class SummaryRow:
    test: str
    nodes: str
    ranks_per_node: str
    figure: str
    measured: str
    threshold: str
    verdict: str
    reason: str
    anchor: str


def anchor_of(name: str) -> str:
    """An HTML/Markdown anchor for a test name."""
    return "test-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def summary_rows(tests: list[Test]) -> list[SummaryRow]:
    """One row per figure of each test (one row for a test without figures)."""
    rows = []
    for t in tests:
        rpn = str(t.ranks_per_node) if t.ranks_per_node else "—"
        figs = t.figures or [None]
        for i, fr in enumerate(figs):
            if fr is None:
                figure, measured, threshold = "—", "—", "—"
            else:
                figure = fr.name
                measured = format_figure(fr.value, fr.unit)
                if fr.stats and fr.stats.n > 1:
                    measured += f" (mean of {fr.stats.n})"
                threshold = format_threshold(fr.threshold)
            first = i == 0
            rows.append(SummaryRow(
                test=t.name if first else "", nodes=t.nodes_text if first else "",
                ranks_per_node=rpn if first else "", figure=figure, measured=measured,
                threshold=threshold, verdict=t.verdict if first else "",
                reason=t.reason if first else "", anchor=anchor_of(t.name)))
    return rows


def summary_text(rows: list[SummaryRow]) -> str:
    """The summary table as aligned plain text (for the terminal)."""
    head = ("Test", "Nodes", "Ranks/node", "Figure", "Measured", "Threshold", "Verdict")
    body = [(r.test, r.nodes, r.ranks_per_node, r.figure, r.measured, r.threshold, r.verdict)
            for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()
                     for line in [head, *body])


# --------------------------------------------------------------------------- sections


def command_lines(testcase: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, command) pairs: every ``*_command`` a check logged (the benchmark's
    own echo of its command line where it has one), else ReFrame's executable and
    options."""
    out = [(k, str(v)) for k, v in testcase.items()
           if k.endswith("_command") and k not in RFM_KEYS and v]
    if not out and testcase.get("executable"):
        out.append(("executable", shlex.join([str(testcase["executable"]),
                                              *map(str, testcase.get("executable_opts") or [])])))
    return out


def provenance(testcase: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, value) of everything the check logged beyond ReFrame's own keys:
    versions, binary paths, placement, sizes.  Core keys first, then the rest sorted."""
    extra = {k: v for k, v in testcase.items()
             if k not in RFM_KEYS and k not in SHOWN_KEYS and not k.endswith("_command")}
    keys = [k for k in CORE_KEYS if k in extra] + sorted(k for k in extra if k not in CORE_KEYS)
    units = {f.name: f.unit for f in figures_of(testcase)}
    return [(k, _show(k, extra[k], units)) for k in keys]


def per_node_text(text: str, units: dict[str, str]) -> str:
    """A logged ``fig=n1:1.5,n2:2.0; ...`` string for people:
    'fig (MiB/s): n1 1.5, n2 2; ...' (the exact string stays in the run report)."""
    parts = []
    for fig, nodes in parse_per_node_text(text).items():
        unit = f" ({units[fig]})" if units.get(fig) else ""
        parts.append(f"{fig}{unit}: " + ", ".join(f"{n} {format_number(v)}"
                                                    for n, v in nodes.items()))
    return "; ".join(parts) or text


def _show(key: str, value: Any, units: dict[str, str] | None = None) -> str:
    if value is None or value == "":
        return "—"
    if "per_node" in key and isinstance(value, str):
        return per_node_text(value, units or {})
    if key == "bytes_moved" and isinstance(value, int):
        return f"{value:,} B ({format_number(value / 2**30)} GiB)"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, float):
        return format_number(value)
    return str(value)


def nodelist_text(nodelist: Any) -> str:
    """'n[1-4]' (ReFrame's own abbreviation) from a list of node names."""
    if not nodelist:
        return "—"
    if isinstance(nodelist, str):
        return nodelist
    from reframe.utility import nodelist_abbrev
    return nodelist_abbrev(list(nodelist))


def deadline_text(testcase: dict[str, Any]) -> str:
    """'2 s deadline, 2.01 s run' (or '—' when the check logs neither)."""
    d, r = testcase.get("deadline_s"), testcase.get("time_run_s")
    if not d and not r:
        return "—"
    parts = []
    if d:
        parts.append(f"{format_number(d)} s deadline")
    if r:
        parts.append(f"{format_number(r)} s run")
    return ", ".join(parts)


@dataclass
class CaseSection:
    """What one test case (a run of a test, or a fixture) shows in its section."""

    title: str
    role: str
    verdict: Verdict
    jobid: str
    nodelist: str
    commands: list[tuple[str, str]]
    deadline: str
    bytes_moved: str
    provenance: list[tuple[str, str]]
    figures: list[tuple[str, str, str, str]]  # name, measured, threshold, ReFrame result
    job_script: str = ""


def case_section(testcase: dict[str, Any], role: str, job_script: str = "") -> CaseSection:
    bm = testcase.get("bytes_moved")
    return CaseSection(
        title=testcase.get("display_name") or testcase.get("name", "?"),
        role=role, verdict=verdict_of(testcase),
        jobid=str(testcase.get("jobid") or "—"),
        nodelist=nodelist_text(testcase.get("job_nodelist")),
        commands=command_lines(testcase), deadline=deadline_text(testcase),
        bytes_moved=_show("bytes_moved", bm) if bm else "—",
        provenance=provenance(testcase),
        figures=[(f.name, format_figure(f.value, f.unit), format_threshold(f), f.result or "—")
                 for f in figures_of(testcase)],
        job_script=job_script)


# --------------------------------------------------------------------------- per node

#: ReFrame's ``--distribute`` adds this parameter (one test case per node).
_NODE_PARAM = re.compile(r"\s+%\$nid=\S+")


def family_of(name: str) -> str:
    """A test's name without its per-node and repeat parameters."""
    return _NODE_PARAM.sub("", _REPEAT_PARAM.sub("", name))


def parse_per_node_text(text: str) -> dict[str, dict[str, float]]:
    """figure → node → value from a logged ``fig=n1:1.5,n2:2.0; fig2=...`` string
    (the fio checks' ``per_node_figures``); parts that do not fit are ignored."""
    out: dict[str, dict[str, float]] = {}
    for part in text.split(";"):
        fig, sep, pairs = part.strip().partition("=")
        if not sep or not fig:
            continue
        for pair in pairs.split(","):
            node, sep2, value = pair.strip().rpartition(":")
            v = _num(value) if sep2 else None
            if node and v is not None and math.isfinite(v):
                out.setdefault(fig.strip(), {})[node] = float(v)
    return out


def per_node_values(tests: list[Test]) -> dict[tuple[str, str], dict[str, list[float]]]:
    """(test family, figure) → node → values, where a figure is measured per node:

    - test cases that each ran on one node (``--distribute``, or a per-node check)
      and share a family, when the family covers more than one node;
    - a logged mapping ``<anything>per_node<anything>``: {node: value} in a test case
      (figure name: the key without ``per_node``), or a string
      ``fig=n1:1.5,n2:2.0; fig2=...`` (the fio checks' ``per_node_figures``).
    """
    out: dict[tuple[str, str], dict[str, list[float]]] = {}
    families: dict[str, list[Test]] = {}
    for t in tests:
        families.setdefault(family_of(t.name), []).append(t)
    for family, members in families.items():
        for t in members:
            for tc in t.cases:
                for key, value in tc.items():
                    if "per_node" not in key or key in RFM_KEYS:
                        continue
                    if isinstance(value, str):
                        for fig, nodes in parse_per_node_text(value).items():
                            for node, v in nodes.items():
                                out.setdefault((family, fig), {}).setdefault(node, []).append(v)
                    elif isinstance(value, dict):
                        fig = key.replace("per_node", "").strip("_") or key
                        for node, v in value.items():
                            if _num(v) is not None:
                                out.setdefault((family, fig), {}).setdefault(
                                    str(node), []).append(float(v))
        if len({t.name for t in members}) < 2:
            continue  # repeats of one test on varying nodes are not a per-node test
        single = [(tc, f) for t in members for tc in t.cases
                  if len(tc.get("job_nodelist") or []) == 1 for f in figures_of(tc)
                  if f.value is not None]
        nodes = {tc["job_nodelist"][0] for tc, _ in single}
        if len(nodes) > 1:
            for tc, f in single:
                out.setdefault((family, f.name), {}).setdefault(
                    tc["job_nodelist"][0], []).append(f.value)
    return out


# --------------------------------------------------------------------------- I/O helpers


def _run_report_validator() -> Any:
    import jsonschema
    from importlib import resources
    schema = json.loads(resources.files("fsaccept").joinpath("schemas/run-report.json")
                        .read_text())
    return jsonschema.Draft202012Validator(schema)


def load_run_report(path: Path | str) -> dict[str, Any]:
    """A ReFrame JSON run report; a clear error naming the file (and the key) otherwise."""
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as err:
        raise RunReportError(f"{path}: cannot read the run report: {err.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise RunReportError(f"{path}: not JSON ({str(err)[:200]}); pass the file ReFrame "
                             "wrote with --report-file") from None
    if not isinstance(data, dict) or "session_info" not in data or "runs" not in data:
        raise RunReportError(f"{path}: not a ReFrame run report (no session_info/runs); "
                             "pass the file ReFrame wrote with --report-file")
    for i, run in enumerate(data["runs"] if isinstance(data["runs"], list) else []):
        if not isinstance(run, dict) or not isinstance(run.get("testcases"), list):
            raise RunReportError(f"{path}: runs[{i}].testcases: missing or not a list")
    errors = sorted(_run_report_validator().iter_errors(data),
                    key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = [f"{path}: {'.'.join(map(str, e.absolute_path)) or '(top level)'}: "
                 f"{str(e.message)[:200]}" for e in errors[:5]]
        if len(errors) > 5:
            lines.append(f"{path}: (and {len(errors) - 5} more errors)")
        raise RunReportError("\n".join(lines))
    return data


def job_script(testcase: dict[str, Any]) -> str:
    """The batch script ReFrame submitted (``rfm_job.sh`` in the test's output or
    stage directory), or '' when it is gone."""
    for key in ("outputdir", "stagedir"):
        d = testcase.get(key)
        if d and (Path(d) / "rfm_job.sh").is_file():
            try:
                return (Path(d) / "rfm_job.sh").read_text(errors="replace")
            except OSError:
                return ""
    return ""


def git_describe(repo: Path) -> str:
    """'<commit>' or '<commit> (with uncommitted changes)'; 'unknown' outside git."""
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=30)
        if commit.returncode != 0:
            return "unknown (not a git work tree)"
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (git not available)"
    text = commit.stdout.strip()
    if dirty.stdout.strip():
        text += " (with uncommitted changes)"
    return text


# --------------------------------------------------------------------------- plots


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _png(fig) -> bytes:
    import io
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    _pyplot().close(fig)
    return buf.getvalue()


def figure_plot(test: Test, ceiling: dict[str, float] | None = None) -> bytes | None:
    """Measured vs threshold (and ceiling) for each figure of a test: one bar per
    run, a line at the passing limit.  None when the test has no measured figure."""
    # A figure that is not finite is shown in the tables (INVALID), never drawn.
    rows = [fr for fr in test.figures if fr.values and all(math.isfinite(v) for v in fr.values)]
    if not rows:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(len(rows), 1, figsize=(6.4, 0.6 + 1.4 * len(rows)), squeeze=False,
                             constrained_layout=True)
    for ax, fr in zip(axes[:, 0], rows):
        vals = fr.values
        labels = [f"run {i + 1}" for i in range(len(vals))] if len(vals) > 1 else ["measured"]
        colors = ["#b00020" if f.result == "fail" else "#1f6f3f" for f in fr.samples
                  if f.value is not None]
        bars = ax.barh(labels, vals, color=colors)
        ax.bar_label(bars, labels=[f"{format_number(v)} {fr.unit}" for v in vals], fontsize=7, padding=2)
        limit = fr.threshold.lower_limit
        if limit is not None:
            ax.axvline(limit, color="black", linestyle="--", label=f"threshold {format_number(limit)} {fr.unit}")
        if ceiling and ceiling.get(fr.name):
            ax.axvline(ceiling[fr.name], color="#1a56b0", linestyle=":",
                       label=f"ceiling {format_number(ceiling[fr.name])} {fr.unit}")
        ax.set_title(f"{test.name}: {fr.name}", fontsize=9, loc="left")
        ax.set_xlabel(fr.unit, fontsize=8)
        ax.tick_params(labelsize=8)
        right = max([*vals, limit or 0, (ceiling or {}).get(fr.name) or 0])
        ax.set_xlim(0, right * 1.12 or 1)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="lower right")
    return _png(fig)


def per_node_plot(family: str, figure: str, values: dict[str, list[float]],
                  unit: str = "") -> bytes:
    """One bar per node (mean of its values), with the spread of the nodes."""
    plt = _pyplot()
    nodes = sorted(values, key=lambda n: [int(t) if t.isdigit() else t
                                          for t in re.split(r"(\d+)", n)])
    means = [statistics.fmean(values[n]) for n in nodes]
    fig, ax = plt.subplots(figsize=(6.4, 2.6), constrained_layout=True)
    ax.bar(nodes, means, color="#1a56b0")
    if len(means) > 1:
        ax.axhline(statistics.fmean(means), color="black", linestyle="--",
                   label=f"mean {format_number(statistics.fmean(means))} {unit}")
        ax.legend(fontsize=7)
    ax.set_title(f"{family}: {figure} per node", fontsize=9, loc="left")
    ax.set_ylabel(unit, fontsize=8)
    ax.tick_params(labelsize=8)
    return _png(fig)


# --------------------------------------------------------------------------- rendering


@dataclass
class Plot:
    name: str  # file name under plots/
    title: str
    png: bytes

    @property
    def base64(self) -> str:
        import base64
        return base64.b64encode(self.png).decode("ascii")


def _unit_of(test: Test, figure: str) -> str:
    return next((fr.unit for fr in test.figures if fr.name == figure), "")


def _utc(ts: Any) -> str:
    """'2026-11-22 02:46:29 UTC' from a Unix time ('' if there is none)."""
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        return ""
    from datetime import datetime, timezone
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def build_context(report: dict[str, Any], *, signed_by: str = "", harness_version: str = "",
                  git_commit: str = "", ceilings: list[Any] | None = None,
                  job_scripts: dict[str, str] | None = None,
                  reference_check: str = "", plots: bool = True) -> dict[str, Any]:
    """Everything the templates show, from a run report and the sign-off data."""
    from fsaccept import assessment

    info = report.get("session_info", {})
    tests = tests_of(report)
    verdict, blocking = overall_verdict(tests)
    job_scripts = job_scripts or {}
    sections, all_plots, assessments = [], [], []
    for t in tests:
        limits: dict[str, float] = {}
        t_assess = []
        for fr in t.figures:
            a = assessment.assess(fr.name, fr.value, fr.unit, t.nodes, ceilings or [])
            if a is not None:
                limits[fr.name] = a.ceiling
                t_assess.append(a)
                assessments.append((t.name, a))
        runs = [case_section(tc, f"Run {i + 1}" if len(t.cases) > 1 else "Measurement",
                             job_scripts.get(tc.get("uuid", ""), ""))
                for i, tc in enumerate(t.cases)]
        gens = [case_section(fx, "Generation (fixture: " + (fx.get("descr") or "dependency")
                             + ")", job_scripts.get(fx.get("uuid", ""), ""))
                for fx in t.fixtures]
        plot = None
        if plots:
            png = figure_plot(t, limits)
            if png:
                plot = Plot(f"{anchor_of(t.name)}.png", f"{t.name}: measured vs threshold", png)
                all_plots.append(plot)
        sections.append({"test": t, "anchor": anchor_of(t.name), "runs": runs,
                         "generation": gens, "plot": plot, "assessments": t_assess,
                         "stats": [(fr.name, fr.unit, fr.stats) for fr in t.figures
                                   if fr.stats and fr.stats.n > 1]})
    node_plots = []
    if plots:
        tests_by_family = {family_of(t.name): t for t in tests}
        for (family, fig), vals in per_node_values(tests).items():
            unit = _unit_of(tests_by_family.get(family, tests[0]), fig) if tests else ""
            p = Plot(f"{anchor_of(family)}-{fig}-per-node.png", f"{family}: {fig} per node",
                     per_node_plot(family, fig, vals, unit))
            node_plots.append(p)
            all_plots.append(p)
    refs = sorted({(tc.get("reference_path") or "—", tc.get("reference_sha256") or "—")
                   for t in tests for tc in t.cases + t.fixtures
                   if tc.get("reference_sha256") or tc.get("reference_path")})
    systems = sorted({tc.get("system") for t in tests for tc in t.cases if tc.get("system")})
    signoff = {
        "system": ", ".join(systems) or "—",
        "date": _utc(info.get("time_start_unix")) or info.get("time_start", "—"),
        "time_end": _utc(info.get("time_end_unix")) or info.get("time_end", "—"),
        "harness_version": harness_version or "—",
        "git_commit": git_commit or "—",
        "reframe_version": info.get("version", "—"),
        "session_uuid": info.get("uuid", "—"),
        "cmdline": info.get("cmdline", "—"),
        "hostname": info.get("hostname", "—"),
        "user": info.get("user", "—"),
        "references": refs,
        "reference_check": reference_check,
        "signed_by": signed_by or "(not signed: pass --signed-by NAME)",
        "verdict": verdict,
        "blocking": blocking,
    }
    return {"signoff": signoff, "rows": summary_rows(tests), "sections": sections,
            "node_plots": node_plots, "plots": all_plots, "assessments": assessments,
            "tests": tests, "has_ceilings": bool(ceilings)}


def render(context: dict[str, Any], template: str) -> str:
    """Render ``templates/<template>`` (report.md.j2 or report.html.j2)."""
    import jinja2
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("fsaccept", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",),
                                            default_for_string=False),
        trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True)
    env.filters["num"] = format_number
    env.filters["md"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    return env.get_template(template).render(**context)


def write_report(run_report: Path | str, out_dir: Path | str, *, signed_by: str = "",
                 repo: Path | None = None, reference: Path | str | None = None,
                 ceilings_file: Path | str | None = None) -> list[Path]:
    """Write report.md, report.html and plots/ into ``out_dir``; returns their paths.

    Ceilings come from ``ceilings_file`` (a YAML file with a ``ceilings:`` map, e.g.
    measured by ``python -m fsaccept.assessment measure``), else from ``reference``
    (default: the reference file the tests recorded, when its SHA-256 still
    matches what they recorded).
    """
    import hashlib

    from fsaccept import __version__, assessment

    report = load_run_report(run_report)
    out_dir = Path(out_dir)
    tests = tests_of(report)
    scripts = {tc.get("uuid", ""): job_script(tc) for t in tests for tc in t.cases + t.fixtures}
    ceilings: list[assessment.Ceiling] = []
    check = ""
    recorded = {(tc.get("reference_path"), tc.get("reference_sha256")) for t in tests
                for tc in t.cases if tc.get("reference_path")}
    if reference is None and len(recorded) == 1:
        path, sha = next(iter(recorded))
        try:
            now = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            now = None
        if now == sha:
            reference = path
            check = f"{path} still has SHA-256 {sha}: ceilings read from it"
        else:
            check = (f"{path} changed or is gone since the run (SHA-256 now "
                     f"{now or 'unreadable'}): no ceilings shown")
    elif reference is None and len(recorded) > 1:
        check = "the tests recorded different reference files: no ceilings shown"
    if ceilings_file is not None:
        ceilings = assessment.ceilings_from_reference_file(ceilings_file)
        check = f"ceilings from {ceilings_file}"
        if Path(ceilings_file).is_file():
            first = Path(ceilings_file).read_text().splitlines()[:1]
            if first and first[0].startswith("#"):
                check += f" ({first[0].lstrip('# ')})"
    elif reference is not None:
        ceilings = assessment.ceilings_from_reference_file(reference)
        if not check:
            check = f"ceilings read from {reference}"
        if not ceilings:
            check += " (it states no ceilings: no assessment)"
    repo = repo or Path(__file__).resolve().parent.parent
    ctx = build_context(report, signed_by=signed_by, harness_version=__version__,
                        git_commit=git_describe(repo), ceilings=ceilings, job_scripts=scripts,
                        reference_check=check)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if ctx["plots"]:
        (out_dir / "plots").mkdir(exist_ok=True)
        for p in ctx["plots"]:
            (out_dir / "plots" / p.name).write_bytes(p.png)
            written.append(out_dir / "plots" / p.name)
    for name in ("report.md", "report.html"):
        (out_dir / name).write_text(render(ctx, name + ".j2"))
        written.append(out_dir / name)
    return written


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    from fsaccept.assessment import CeilingError

    ap = argparse.ArgumentParser(
        prog="python -m fsaccept.report",
        description="write the sign-off report (report.md, report.html) from a ReFrame run report")
    ap.add_argument("run_report", help="the JSON file ReFrame wrote with --report-file")
    ap.add_argument("--out", help="directory to write into (default: the run report's)")
    ap.add_argument("--signed-by", default="", metavar="NAME")
    ap.add_argument("--reference", help="reference file whose ceilings to use (default: the "
                    "one the tests recorded, if unchanged)")
    ap.add_argument("--ceilings", metavar="FILE", help="YAML file with a ceilings: map "
                    "(e.g. from python -m fsaccept.assessment measure); overrides the reference's")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else Path(args.run_report).resolve().parent
    try:
        written = write_report(args.run_report, out, signed_by=args.signed_by,
                               reference=args.reference, ceilings_file=args.ceilings)
    except (RunReportError, CeilingError) as err:
        print(f"fsaccept.report: {err}", file=sys.stderr)
        return 2
    del written
    tests = tests_of(load_run_report(args.run_report))
    ctx_verdict = overall_verdict(tests)
    print(summary_text(summary_rows(tests)))
    print(f"report: {out / 'report.md'}")
    print(f"report: {out / 'report.html'}")
    print(f"overall verdict: {ctx_verdict[0]}"
          + "".join(f"\n  {b}" for b in ctx_verdict[1]))
    return 0 if ctx_verdict[0] == ACCEPTED else 1


if __name__ == "__main__":
    raise SystemExit(main())
