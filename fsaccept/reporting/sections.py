"""What the sign-off report shows of each test: summary rows, command lines,
provenance, deadlines, and per-node figures."""

from __future__ import annotations

import json
import math
import re
import shlex
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fsaccept.benchmarks.catalogue import DATASET_MARGIN_WARNING, DatasetMargin
from fsaccept.core import slurm
from fsaccept.core.formatting import format_figure, format_number, one_line
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.core.units import GIB
# RFM_KEYS and parse_per_node_text are read at the door (case.py), and named here too.
from fsaccept.reporting.case import (RFM_KEYS, Case, is_figure_map,  # noqa: F401
                                     parse_per_node_text, per_node_of)
from fsaccept.reporting.signoff.output import MARGIN_FIELDS
from fsaccept.reporting.runreport import FigureRow, Test
from fsaccept.reporting.verdicts import (NOT_RUN, REPEAT_PARAM, VERDICT_ORDER, Verdict,
                                         format_threshold, spec_of_case, verdict_of, worst)

# --------------------------------------------------------------------------- rows

#: Shown in rows of their own (deadline vs time run, bytes moved), not again; and the
#: probe's measurements as JSON, which the sign-off re-reads (its sentence,
#: ``reduction_summary``, and its ratios are shown).
SHOWN_KEYS = frozenset({"deadline_s", "time_run_s", "bytes_moved", "reduction_result",
                        *MARGIN_FIELDS})

#: Provenance keys shown in their own rows of a test's section, in this order.
CORE_KEYS = ("reference_key", "node_fraction", "node_rounding", "partition_nodes", "usable_nodes",
             "num_nodes", "ranks_per_node", "rank_map", "target_dir", "target_fstype", "direct_io",
             "reference_path", "reference_sha256")



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


@dataclass(frozen=True)
class TargetSection:
    """One file system of a reference file's ``targets:``: its tests' rows and verdict
    (the worst of them; NOT RUN when none ran)."""

    name: str
    #: Where it is: '/scratch (lustre; mount point /scratch)', as the reference says,
    #: else as its tests recorded it.
    where: str
    verdict: str
    counts: list[tuple[str, int]]
    rows: list[SummaryRow]

    @property
    def title(self) -> str:
        """'Target scratch'; the tests of no one file system (pre-flight checks) apart."""
        return f"Target {self.name}" if self.name else "Pre-flight checks"


def target_sections(tests: list[Test], shown: list[Test], reference: Any = None
                    ) -> list[TargetSection]:
    """One section per named target (the reference's, in its order, then any other a
    test recorded); none for a single ``target:``.  ``shown``: the tests that have rows
    of their own (not those of a check summarised whole)."""
    names = list(reference.target_names) if reference is not None else []
    names += [n for n in dict.fromkeys(t.target for t in tests) if n not in names]
    if not any(names):
        return []
    names.sort(key=bool)  # the pre-flight checks first, as they ran
    out = []
    for name in names:
        mine = [t for t in tests if t.target == name]
        if not name and not mine:
            continue
        verdicts = [t.verdict for t in mine]
        counts = [(v, verdicts.count(v)) for v in VERDICT_ORDER if v in verdicts]
        out.append(TargetSection(
            name=name, where=_target_where(name, mine, reference),
            verdict=worst(verdicts) if mine else NOT_RUN, counts=counts,
            rows=summary_rows([t for t in shown if t.target == name])))
    return out


def _target_where(name: str, tests: list[Test], reference: Any) -> str:
    selected = reference.for_record(name) if reference is not None else None
    if selected is not None:
        t = selected.target
        pins = [t.fstype] + [f"{label} {value}" for label, value in
                             (("mount point", t.mount_point), ("source", t.source)) if value]
        return f"{t.path} ({'; '.join(pins)})"
    recorded = next((t.case for t in tests if t.case.get("target_dir")), None)
    if not name:
        return "Of no one file system: the launch check and what every target shares."
    if recorded is None:
        return "—"
    return (f"{recorded.get('target_dir')} (recorded: {recorded.get('target_fstype') or '—'}"
            f"; mount point {recorded.get('target_mount') or '—'})")


def target_text(section: TargetSection) -> str:
    """A target's heading line for the terminal."""
    return one_line(f"{section.title}: {section.where}: {section.verdict}")


def summary_text(rows: list[SummaryRow]) -> str:
    """The summary table as aligned plain text (for the terminal), each cell on one line."""
    head = ("Test", "Nodes", "Ranks/node", "Figure", "Measured", "Threshold", "Verdict")
    body = [tuple(map(one_line, (r.test, r.nodes, r.ranks_per_node, r.figure, r.measured,
                                 r.threshold, r.verdict))) for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()
                     for line in [head, *body])


# --------------------------------------------------------------------------- sections


def command_lines(testcase: Case) -> list[tuple[str, str]]:
    """(label, command) pairs: every ``*_command`` a check logged (the benchmark's
    own echo of its command line where it has one), else ReFrame's executable and
    options."""
    out = [(k, str(v)) for k, v in testcase.items()
           if k.endswith("_command") and k not in RFM_KEYS and v]
    if not out and testcase.get("executable"):
        opts = testcase.get("executable_opts") or []
        out.append(("executable", shlex.join([str(testcase["executable"]), *map(
            str, opts if isinstance(opts, list) else [opts])])))
    return out


def provenance(case: Case) -> list[tuple[str, str]]:
    """(key, value) of everything the check logged beyond ReFrame's own keys:
    versions, binary paths, placement, sizes.  Core keys first, then the rest sorted."""
    extra = {k: v for k, v in case.variables.items()
             if k not in SHOWN_KEYS and not k.endswith("_command")}
    keys = [k for k in CORE_KEYS if k in extra] + sorted(k for k in extra if k not in CORE_KEYS)
    units = {f.name: f.unit for f in case.figures}
    return [(k, _show(k, extra[k], units)) for k in keys]


def per_node_text(figures: Mapping[str, Mapping[str, float]], units: dict[str, str],
                  recorded: str = "") -> str:
    """Per-node figures for people: 'fig (MiB/s): n1 1.5, n2 2; ...' (the exact values
    stay in the run report); ``recorded`` when there are none."""
    parts = []
    for fig, nodes in figures.items():
        unit = f" ({units[fig]})" if units.get(fig) else ""
        parts.append(f"{fig}{unit}: " + ", ".join(f"{n} {format_number(v)}"
                                                    for n, v in nodes.items()))
    return "; ".join(parts) or recorded


def _show(key: str, value: Any, units: dict[str, str] | None = None) -> str:
    if value is None or value == "" or ("per_node" in key and value == {}):
        return "—"
    if "per_node" in key and (isinstance(value, str) or is_figure_map(value)):
        return per_node_text(per_node_of(key, value), units or {},
                             value if isinstance(value, str) else "")
    if key == "job_accounting" and isinstance(value, str):
        return slurm.accounting_text(value)
    if key == "bytes_moved" and isinstance(value, int) and not isinstance(value, bool):
        if abs(value) >= 10**21:  # beyond any file system: shown as what it is
            return f"{format_number(value)} B"
        return f"{value:,} B ({format_number(value / GIB)} GiB)"
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
    from reframe.utility import nodelist_abbrev  # heavy: ReFrame, for a node list only
    return nodelist_abbrev(list(nodelist))


def deadline_text(testcase: Case) -> str:
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


def _mib(nbytes: int) -> str:
    return f"{format_number(nbytes / 2**20)} MiB"


def _times(ratio: float) -> str:
    """A margin with two significant digits (0.97x, 2.8x, 17x)."""
    return f"{ratio:.2g}x" if ratio < 100 else f"{ratio:,.0f}x"


def margin_text(margin: DatasetMargin, operation: str) -> str:
    """'dataset 256 MiB, the 3 s read moves 91 MiB: margin 2.8x'."""
    return (f"dataset {_mib(margin.available_bytes)}, the {margin.deadline_s} s "
            f"{operation or 'phase'} moves {_mib(margin.consumed_bytes)}: margin "
            f"{_times(margin.ratio)}")


def margin_warning(margin: DatasetMargin, key: str) -> str:
    """The warning under :data:`DATASET_MARGIN_WARNING` ('' above it), naming the
    reference keys to raise."""
    if not margin.low:
        return ""
    keys = " or ".join(f"tests.{key}.{k}" if key else k for k in margin.sized_by)
    return (f"Warning: dataset margin {_times(margin.ratio)} is under "
            f"{DATASET_MARGIN_WARNING:g}x: a faster run may exhaust the data before the "
            f"deadline (INVALID); raise {keys or 'the dataset size'}")


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
    #: Its dataset margin ('' for none) and, under the warning's bound, the warning.
    dataset_margin: str = ""
    margin_warning: str = ""


def case_section(case: Case, role: str, job_script: str = "",
                 margin: DatasetMargin | None = None) -> CaseSection:
    bm = case.get("bytes_moved")
    spec = spec_of_case(case)
    operation = str(spec.attrs.get("operation") or "") if spec is not None else ""
    return CaseSection(
        title=case.get("display_name") or case.get("name", "?"),
        role=role, verdict=verdict_of(case),
        jobid=case.job.jobid or "—",
        nodelist=nodelist_text(case.get("job_nodelist")),  # as recorded: a list or a text
        commands=command_lines(case), deadline=deadline_text(case),
        bytes_moved=_show("bytes_moved", bm) if bm else "—",
        provenance=provenance(case),
        figures=[(f.name, format_figure(f.value, f.unit), format_threshold(f), f.result or "—")
                 for f in case.figures],
        job_script=job_script,
        dataset_margin=margin_text(margin, operation) if margin is not None else "",
        margin_warning=margin_warning(margin, spec.key if spec is not None else "")
        if margin is not None else "")


# --------------------------------------------------------------------------- per node

#: ReFrame's ``--distribute`` adds this parameter (one test case per node).
_NODE_PARAM = re.compile(r"\s+%\$nid=\S+")


def family_of(name: str) -> str:
    """A test's name without its per-node and repeat parameters."""
    return _NODE_PARAM.sub("", REPEAT_PARAM.sub("", name))


#: ReFrame's parameters (``%xfer=1m``) and a fixture's scope (``~local:compute+gnu``).
_PARAMS = re.compile(r"\s+[%~]\S*")
#: A number that ends a name, and what joins it (``IORWrite0042``, ``fio_ost_17``).
_NUMBERED = re.compile(r"(?<=[A-Za-z])[_-]?\d+$")


def check_family(name: str) -> str:
    """The family of checks a test belongs to, for a run of very many separately named
    tests (parameter sweeps, many-check sites): its class name, without any parameter
    or a trailing number ('IORWriteBandwidth %nodes=4 %xfer=1m' and
    'IORWriteBandwidth0042' are both 'IORWriteBandwidth')."""
    base = _PARAMS.sub("", name).strip() or name
    return _NUMBERED.sub("", base) or base


def per_node_values(tests: list[Test]) -> dict[tuple[str, str], dict[str, list[float]]]:
    """(test family, figure) → node → values, where a figure is measured per node:

    - test cases that each ran on one node (``--distribute``, or a per-node check)
      and share a family, when the family covers more than one node;
    - the per-node figures a test case logged (:attr:`.case.Case.per_node`).
    """
    out: dict[tuple[str, str], dict[str, list[float]]] = {}
    families: dict[str, list[Test]] = {}
    for t in tests:
        families.setdefault(family_of(t.name), []).append(t)
    for family, members in families.items():
        for t in members:
            for tc in t.cases:
                for fig, nodes in tc.per_node.items():
                    for node, v in nodes.items():
                        out.setdefault((family, fig), {}).setdefault(node, []).append(v)
        if len({t.name for t in members}) < 2:
            continue  # repeats of one test on varying nodes are not a per-node test
        single = [(tc.job.nodelist[0], f) for t in members for tc in t.cases
                  if len(tc.job.nodelist) == 1 for f in tc.figures if f.value is not None]
        if len({node for node, _ in single}) > 1:
            for node, f in single:
                out.setdefault((family, f.name), {}).setdefault(node, []).append(f.value)
    return out


# --------------------------------------------------------------------------- checks

#: A check with more test cases than this (``--distribute=all`` makes one per node) is
#: summarised: counts per verdict, its figures' spread, the worst cases in full, one
#: compact line per case, one plot.
GROUP_LIMIT = 10
#: Test cases of a summarised check shown in full: the worst first.
WORST_SHOWN = 10
#: A reason in a compact line is cut here (its full text: the worst cases, the run report).
COMPACT_REASON_CHARS = 160
#: A run of more checks than this (parameter sweeps, many-check sites: thousands of
#: separately named tests) is grouped by check family (:func:`check_family`), each
#: summarised as a check of many test cases is: one plot, the worst cases in full.
FAMILY_LIMIT = 60
#: Where there are still more families than that (thousands of unrelated names), the
#: families of one test are summarised together, under this name.
POOLED = "Checks of one test case each"


def main_figure(t: Test) -> FigureRow | None:
    """The figure a test is judged on: the first compared with a limit (the slow-node
    count aside), else the first."""
    judged = [fr for fr in t.figures if fr.threshold.limited and fr.name != OUTLIER_FIGURE]
    return (judged or t.figures or [None])[0]


def margin(t: Test) -> float:
    """How far the test's main figure is inside its limit (measured ÷ floor, or ceiling
    ÷ measured; < 1 is outside): the worst case has the smallest."""
    fr = main_figure(t)
    if fr is None or fr.value is None:
        return -math.inf
    th = fr.threshold
    try:
        if th.lower_limit:
            return fr.value / th.lower_limit
        if th.upper_limit is not None and fr.value:
            return th.upper_limit / fr.value
    except (ZeroDivisionError, OverflowError):
        pass
    return fr.value


def worst_first(tests: list[Test]) -> list[Test]:
    """Worst verdict first (ERROR, ABORTED, INVALID, FAIL...), then the smallest margin."""
    order = {v: i for i, v in enumerate(VERDICT_ORDER)}
    return sorted(tests, key=lambda t: (order.get(t.verdict, 0), margin(t)))


def case_label(t: Test, check: str) -> str:
    """A test case within its check: its node (one per case) when that is all its name
    adds, else what its name adds (a variant's parameters)."""
    rest = t.name[len(check):].strip() if t.name.startswith(check) else t.name
    nodes = t.case.job.nodelist
    if len(nodes) == 1 and not _NODE_PARAM.sub("", " " + rest):
        return nodes[0]
    return rest or t.name


@dataclass
class CompactRow:
    test: str
    label: str
    verdict: str
    measured: str
    reason: str
    anchor: str | None  # its full section, when it has one


@dataclass
class CheckSummary:
    """One check and its test cases (one, or one per node...)."""

    name: str
    tests: list[Test]
    detailed: list[Test]
    counts: list[tuple[str, int]]
    figure: str
    spread: str  # 'min 1,200 / median 1,280 / max 1,320 MiB/s'
    compact: list[CompactRow]
    plot: Any = None
    #: The report's sections of its detailed tests (the templates show them under it).
    sections: list[dict[str, Any]] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return anchor_of(self.name) + "-check"

    @property
    def large(self) -> bool:
        return len(self.tests) > GROUP_LIMIT

    @property
    def verdict(self) -> str:
        return worst([t.verdict for t in self.tests])


def scaled(tests: list[Test]) -> bool:
    """A run of more checks than :data:`FAMILY_LIMIT`: grouped per check family."""
    return len({family_of(t.name) for t in tests}) > FAMILY_LIMIT


def check_summaries(tests: list[Test]) -> list[CheckSummary]:
    """The tests grouped per check (name without ReFrame's per-node and repeat
    parameters), in the order they ran; per check family when there are more than
    :data:`FAMILY_LIMIT` checks, and then, if there are still more families than
    that, those of one test together (:data:`POOLED`)."""
    groups: dict[str, list[Test]] = {}
    for t in tests:
        groups.setdefault(family_of(t.name), []).append(t)
    if len(groups) > FAMILY_LIMIT:
        groups = {}
        for t in tests:
            groups.setdefault(check_family(family_of(t.name)), []).append(t)
    if len(groups) > FAMILY_LIMIT:
        alone = [name for name, members in groups.items() if len(members) == 1]
        pooled = [groups.pop(name)[0] for name in alone]
        if pooled:
            groups[POOLED] = pooled
    out = []
    for name, members in groups.items():
        large = len(members) > GROUP_LIMIT
        ranked = worst_first(members) if large else members
        detailed = ranked[:WORST_SHOWN] if large else members
        shown = {id(t) for t in detailed}
        counts: dict[str, int] = {}
        for t in members:
            counts[t.verdict] = counts.get(t.verdict, 0) + 1
        main = [main_figure(t) for t in members]
        names = {fr.name for fr in main if fr is not None}
        figure, spread = "—", "—"
        if len(names) == 1:
            figure = names.pop()
            vals = sorted(fr.value for fr in main if fr is not None and fr.value is not None
                          and math.isfinite(fr.value))
            unit = next(fr.unit for fr in main if fr is not None)
            if vals:
                spread = (f"min {format_number(vals[0])} / median "
                          f"{format_number(statistics.median(vals))} / max "
                          f"{format_number(vals[-1])} {unit}").rstrip()
        compact = []
        if large:
            for t in ranked:
                fr = main_figure(t)
                reason = t.reason
                if len(reason) > COMPACT_REASON_CHARS:
                    reason = reason[:COMPACT_REASON_CHARS - 1] + "…"
                compact.append(CompactRow(
                    t.name, case_label(t, name), t.verdict,
                    format_figure(fr.value, fr.unit) if fr is not None else "—", reason,
                    anchor_of(t.name) if id(t) in shown else None))
        out.append(CheckSummary(name, members, detailed,
                                sorted(counts.items(), key=lambda kv: VERDICT_ORDER.index(
                                    kv[0]) if kv[0] in VERDICT_ORDER else 0),
                                figure, spread, compact))
    return out


def check_text(checks: list[CheckSummary]) -> str:
    """Per check, for the terminal: 'FioSequentialWrite  1,667 cases  PASS 1,660, FAIL 7'."""
    width = max(len(one_line(c.name)) for c in checks)
    return "\n".join(f"{one_line(c.name).ljust(width)}  {len(c.tests):>7,} case"
                     f"{'s' if len(c.tests) != 1 else ' '}  "
                     + ", ".join(f"{v} {n:,}" for v, n in c.counts) for c in checks)


# --------------------------------------------------------------------------- data left


def data_left_lines(tests: list[Test]) -> list[str]:
    """'<test case>: <path>: N files could not be removed (why)' for every test case
    (fixtures included, once each) that logged ``data_left``: data on the target that a
    test could not remove, or left alone because this run did not create it."""
    out: list[str] = []
    for t in tests:
        for tc in t.cases + t.fixtures:
            left = tc.get("data_left")
            if left and isinstance(left, str):
                line = f"{tc.get('display_name') or tc.get('name', '?')}: {left}"
                if line not in out:
                    out.append(line)
    return out
