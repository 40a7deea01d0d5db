"""ReFrame's JSON run report (``--report-file``) read into tests, each judged.

A test repeated (``--repeat``, ``--reruns``, retries) is one row: its verdict
is the worst of its runs, its figures have n, mean, std, min and max.  The
session's verdict is decided in :mod:`.verdict`.

Nothing is parsed from benchmark output again.  Each test case is typed once, at the
door (:func:`fsaccept.reporting.case.typed`); every judgement here takes a
:class:`~fsaccept.reporting.case.Case`.  Pure functions except :func:`load_run_report`
and :func:`job_script`, which read files (:func:`read_run_report` and :func:`job_script`
through the sign-off's :class:`fsaccept.core.inputs.Reader`, which reads each once).
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fsaccept.core import inputs
from fsaccept.core.formatting import format_number
from fsaccept.benchmarks.catalogue import ACCEPTANCE
from fsaccept.core.pernode import OUTLIER_FIGURE
from fsaccept.core.statistics import Spread
from fsaccept.core.degraded import SCENARIO_PARAMETER
from fsaccept.core.reference import TARGET_PARAMETER, ReferenceError
from fsaccept.reporting.case import Case, TypedReport, typed
from fsaccept.reporting.evidence import evidence_reasons
from fsaccept.reporting.signoff.common import RunFiles, SessionEvidence, session_evidence
from fsaccept.reporting.signoff.degraded import degraded_dataset_reasons
from fsaccept.reporting.repetitions import on_the_mean, repetition_verdicts
from fsaccept.reporting.verdicts import (FAIL, INVALID, NOT_RUN, PASS, REPEAT_PARAM, SKIPPED,
                                         SKIPPED_BY_REFRAME, Figure, RunReportError, Verdict,
                                         figures_of, format_threshold, identity_problems,
                                         spec_of_case, verdict_of, worst)

# --------------------------------------------------------------------------- tests


def stats_of(values: list[float]) -> Spread | None:
    """The spread of a test's repeated runs' values (ReFrame's ``--repeat``), as
    recorded."""
    return Spread(tuple(values)) if values else None


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
    def stats(self) -> Spread | None:
        return stats_of(self.values)

    @property
    def threshold(self) -> Figure:
        return self.samples[-1]

    @property
    def failed(self) -> bool:
        return any(f.result == "fail" for f in self.samples)


@dataclass
class Test:
    """One test (repeats grouped) with its figures, provenance and fixtures (each case a
    :class:`~fsaccept.reporting.case.Case`)."""

    name: str
    cases: list[Case]
    verdicts: list[Verdict]
    fixtures: list[Case] = field(default_factory=list)
    figures: list[FigureRow] = field(default_factory=list)
    #: What its repetitions as a whole are judged by (too few, too noisy:
    #: :mod:`.repetitions`), beside each one's own verdict.
    repeated: list[Verdict] = field(default_factory=list)

    @property
    def case(self) -> Case:
        """The last run of the test (the one a retry ended with)."""
        return self.cases[-1]

    @property
    def verdict(self) -> str:
        return worst([v.verdict for v in self.verdicts + self.repeated])

    @property
    def reason(self) -> str:
        reasons = []
        for i, v in enumerate(self.verdicts):
            if v.verdict != PASS and v.reason:
                prefix = f"run {i + 1}: " if len(self.verdicts) > 1 else ""
                if prefix + v.reason not in reasons:
                    reasons.append(prefix + v.reason)
        reasons += [v.reason for v in self.repeated if v.reason not in reasons]
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
        """'4 of 4 (100 %; 0.9 asked)'; '1382 of 1536 (90 %; 0.9 asked, rounded down)' when
        the reference rounds down."""
        n = self.nodes
        if n is None:
            return "—"
        text = str(n)
        total = self.partition_nodes
        if total and max(n, total) < 10**15:  # larger: an edit, not a partition
            text += f" of {total} ({format_number(round(100 * n / total, 1))} %"
            if self.node_fraction is not None:
                text += f"; {format_number(self.node_fraction)} asked"
                if self.case.get("node_rounding") == "down":
                    text += ", rounded down"
            text += ")"
        return text

    @property
    def tags(self) -> list[str]:
        return sorted(self.case.get("tags") or [])

    @property
    def target(self) -> str:
        """The name of the target it ran on (``targets.<name>``; "": the single one)."""
        return target_of(self.case)

    @property
    def scenario(self) -> str:
        """The fault scenario it ran under (``fault_scenario``; "": none named)."""
        return scenario_of(self.case)


def scenario_of(tc: Case) -> str:
    """The fault scenario a degraded-mode test case recorded (its
    ``SCENARIO_PARAMETER``; "": none, the system's one plan)."""
    name = tc.get(SCENARIO_PARAMETER)
    return name if isinstance(name, str) else ""


def target_of(tc: Case) -> str:
    """The target a test case recorded (its ``TARGET_PARAMETER``; "": none, the file's
    single ``target:``)."""
    name = tc.get(TARGET_PARAMETER)
    return name if isinstance(name, str) else ""


def reference_of_case(tc: Case, reference: Any) -> tuple[Any, list[str]]:
    """(the verified reference with the case's target selected, or None; why a case
    names a target the file has not).  With several targets, a case that names none is
    of no one file system (a pre-flight check, the binaries): None, unless it is an
    acceptance test, which must name its target."""
    if reference is None:
        return None, []
    selected = reference.for_record(target_of(tc))
    if selected is not None:
        return selected, []
    named = ", ".join(n for n in reference.target_names if n) or "none: it has one target:"
    if not target_of(tc):
        spec = spec_of_case(tc)
        if spec is None or spec.role != ACCEPTANCE:
            return None, []
        return None, [f"recorded no {TARGET_PARAMETER}, but the reference file has several "
                      f"targets ({named})"]
    return None, [f"recorded {TARGET_PARAMETER} {target_of(tc)[:40]!r}, but the reference "
                  f"file's targets are {named}"]


def test_key(testcase: Case) -> tuple[str, str, str, str]:
    """What identifies a test across repeats: name without ``%repeat_no=N``, system,
    partition, environment."""
    name = REPEAT_PARAM.sub("", testcase.get("name", ""))
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


def tests_of(report: TypedReport | dict[str, Any], reference: Any = None,
             files: RunFiles | None = None) -> list[Test]:
    """The report's tests (non-fixtures), repeats grouped, each with the fixtures
    it depends on (e.g. the dataset a read test reads), in the order ReFrame ran them.
    ``report``: typed at the door (a run report as parsed is typed there first).

    ``reference``: the reference file (:class:`fsaccept.core.reference.Reference`) the
    tests recorded, verified by its SHA-256: a pass whose recorded thresholds are looser
    than the file's is INVALID.

    ``files``: the run's files, read by the sign-off's reader, that a record a check
    keeps is rebuilt from (:class:`fsaccept.reporting.signoff.common.RunFiles`); None: none
    can be, and a test whose record needs them is INVALID (evidence missing)."""
    cases = typed(report).cases
    evidence = session_evidence(cases, files)
    by_unique: dict[tuple[str, str], Case] = {}
    for tc in cases:
        by_unique[(tc.get("unique_name") or tc.get("name", ""),
                   f"{tc.get('system')}:{tc.get('partition')}")] = tc
    groups: dict[tuple[str, str, str, str], list[Case]] = {}
    for tc in cases:
        if tc.get("fixture"):
            continue
        groups.setdefault(test_key(tc), []).append(tc)
    fixture_verdicts: dict[int, Verdict] = {}
    tests = []
    for key, group in groups.items():
        fixtures: list[Case] = []
        verdicts = []
        for tc in group:
            own, missing = [], []
            for dep in tc.get("dependencies_actual") or []:
                k = _fixture_key(dep)
                fx = by_unique.get(k) if k else None
                if fx is None:
                    missing.append(k[0] if k else repr(dep))
                    continue
                own.append(fx)
                if fx not in fixtures:
                    fixtures.append(fx)
            for fx in own:
                if id(fx) not in fixture_verdicts:
                    fixture_verdicts[id(fx)] = verdict_of(fx)
            verdicts.append(_case_verdict(tc, [(fx, fixture_verdicts[id(fx)]) for fx in own],
                                          missing, reference, evidence))
        rows: dict[str, FigureRow] = {}
        for tc in group:
            for fig in tc.figures:
                rows.setdefault(fig.name, FigureRow(fig.name, fig.unit, [])).samples.append(fig)
        tc = group[-1]
        spec, verified = spec_of_case(tc), reference_of_case(tc, reference)[0]
        verdicts = on_the_mean(spec, verified, group, verdicts,
                               lambda case: looser_thresholds(case, reference))
        tests.append(Test(name=key[0], cases=group, verdicts=verdicts,
                          fixtures=fixtures, figures=list(rows.values()),
                          repeated=repetition_verdicts(spec, verified, len(group),
                                                       rows.values())))
    return tests


def _fixture_text(fx: Case, v: Verdict) -> str:
    return (f"{fx.get('display_name') or fx.get('name')} is {v.verdict}"
            + (f": {v.reason}" if v.reason else ""))


#: The verdicts of a case whose job ran, whose record (identity, evidence) is judged: a
#: case skipped or not run is never judged on evidence of a job that did not run.
RAN_A_JOB = (PASS, FAIL, INVALID)


def record_problems(tc: Case, reference: Any,
                     session: SessionEvidence | None) -> list[str]:
    """What in a test case's record contradicts its class (the catalogue) or its own
    evidence (judged as the live check judged it); the target it recorded among the
    reference's."""
    reference, wrong = reference_of_case(tc, reference)
    return wrong + identity_problems(tc) + evidence_reasons(
        tc, spec_of_case(tc), reference.target_fstype if reference is not None else None,
        session or SessionEvidence(), reference)


def _case_verdict(tc: Case, fixtures: list[tuple[Case, Verdict]],
                  missing: list[str], reference: Any,
                  session: SessionEvidence | None = None) -> Verdict:
    """A test case's verdict with what it depends on: a test not run because a fixture
    failed says which and why; a figure measured over a dataset whose generation did not
    pass (or is not in the run report) is not certified (INVALID); a pass against
    thresholds looser than the reference file's is INVALID."""
    v = verdict_of(tc)
    problems = record_problems(tc, reference, session) + degraded_dataset_reasons(
        tc, spec_of_case(tc), [fx for fx, _ in fixtures]) if v.verdict in RAN_A_JOB else []
    if problems:
        # Judged all the same against its class's entry: every reason is shown.
        looser = looser_thresholds(tc, reference) if reference is not None else []
        return Verdict(INVALID, "; ".join(([v.reason] if v.verdict == INVALID and v.reason
                                           else []) + problems + looser))
    if v.verdict == SKIPPED and v.reason == SKIPPED_BY_REFRAME:
        # A run report that did not record why: say which fixture skipped and why.
        skipped = [f"its fixture {fx.get('display_name') or fx.get('name')} was skipped: "
                   f"{fv.reason}" for fx, fv in fixtures
                   if fv.verdict == SKIPPED and fx.get("skip_reason")]
        return Verdict(SKIPPED, "; ".join(skipped)) if skipped else v
    failed = [_fixture_text(fx, fv) for fx, fv in fixtures if fv.verdict != PASS]
    if v.verdict == NOT_RUN:
        return Verdict(NOT_RUN, "; ".join(failed)) if failed else v
    if v.verdict in (PASS, FAIL) and (failed or missing):
        why = failed + [f"{m}, which it depends on, is not in the run report" for m in missing]
        return Verdict(INVALID, "measured over what its fixture prepared, which did not "
                       "pass: " + "; ".join(why))
    if v.verdict == PASS and reference is not None:
        looser = looser_thresholds(tc, reference)
        if looser:
            return Verdict(INVALID, "; ".join(looser))
    return v


def looser_thresholds(tc: Case, reference: Any) -> list[str]:
    """Each threshold of the test's reference entry (``tests.<reference_key>``) that the
    test case did not apply at least as strictly (value and tolerance as ReFrame applies
    them): 'write_bandwidth: recorded ≥ 10 MiB/s, the reference file says ≥ 45 MiB/s'."""
    spec = spec_of_case(tc)
    # Its target's entries (a target the file lacks: record_problems says so).
    reference, _ = reference_of_case(tc, reference)
    # Its class's entry, never the reference_key it recorded (identity_problems says
    # when they differ): a probe or a fixture has no threshold of its own.
    if spec is None or spec.role != ACCEPTANCE or reference is None:
        return []
    if spec.filled:  # judged against its empty counterpart's figures (reporting.fill)
        return _looser_than_fixed(spec, {f.name: f for f in figures_of(tc)})
    key = spec.key
    try:
        # A degraded-mode test: the healthy entry's, scaled by the contract's fraction.
        expected = (reference.degraded_thresholds(key, scenario_of(tc)) if spec.degraded
                    else reference.thresholds(key))
    except (ReferenceError, TypeError, ValueError) as err:
        return [f"the reference file has no usable entry {reference.target.tests_where}."
                f"{key}: {str(err)[:200]}"]
    recorded = figures_of(tc)
    out = _looser_than_fixed(spec, {f.name: f for f in recorded})
    by_name = {f.name: f for f in recorded}
    for name, th in expected.items():
        # A single threshold judges the test's main figure (its catalogue's first), by name.
        fig = by_name.get(name or spec.main_figure) or (
            None if name else next((f for f in recorded if f.name != OUTLIER_FIGURE
                                    and spec.main_figure.startswith("^")
                                    and spec.reports(f.name)), None))
        want = Figure(name or (fig.name if fig else "figure"), None, th.unit,
                      *th.as_reframe_reference()[:3])
        shown = f"{want.name}: the reference file says {format_threshold(want)}"
        if fig is None:
            out.append(f"{shown}, but the run report records no such figure")
        elif fig.unit != th.unit:
            out.append(f"{shown}, but the run report records it in {fig.unit!r}")
        elif _looser(fig, want):
            out.append(f"{shown}, but the test was judged against "
                       f"{format_threshold(fig)}: looser than the reference")
    return out


@dataclass
class SessionCheck:
    """What the sign-off finds in the run report as a whole: ``blocking``, contradictions
    (a fixture that did not pass, counts that do not add up, a case of another session);
    ``unverified``, what it cannot verify (no verified reference, acceptance tests the
    reference defines that did not run): never ACCEPTED."""

    blocking: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)


def _looser_than_fixed(spec: Any, by_name: dict[str, Figure]) -> list[str]:
    """Each threshold the test's class always applies (its catalogue record) that the test
    case did not apply at least as strictly."""
    out = []
    for name, (value, lower, upper, unit) in spec.fixed_thresholds.items():
        want, fig = Figure(name, None, unit, value, lower, upper), by_name.get(name)
        if fig is None or fig.unit != unit or _looser(fig, want):
            out.append(f"{name}: {spec.check} is always judged against "
                       f"{format_threshold(want)}, but the run report records "
                       + ("no such figure" if fig is None else format_threshold(fig)))
    return out


def _looser(fig: Figure, want: Figure) -> bool:
    return ((want.lower_limit is not None
             and (fig.lower_limit is None or fig.lower_limit < want.lower_limit))
            or (want.upper_limit is not None
                and (fig.upper_limit is None or fig.upper_limit > want.upper_limit)))


# --------------------------------------------------------------------------- I/O helpers


def _run_report_schema() -> dict[str, Any]:
    return json.loads(resources.files("fsaccept").joinpath("reporting/run-report.schema.json")
                      .read_text())


#: The keywords the run-report schema may use: none of them looks at a string's or a
#: number's value, only at types, keys and lengths, which :func:`_skeleton` keeps.
SKELETON_KEYWORDS = frozenset({"$schema", "title", "description", "type", "required",
                               "properties", "items", "prefixItems", "minItems",
                               "additionalProperties", "$defs", "$ref"})


def _run_report_validators() -> tuple[Any, Any]:
    """Validators of the run report without its test cases, and of one test case."""
    import jsonschema  # heavy: only a run report read pays for it
    schema = _run_report_schema()
    top = json.loads(json.dumps(schema))
    top["properties"]["runs"]["items"]["properties"]["testcases"] = {"type": "array"}
    case = dict(schema["$defs"]["testcase"], **{"$defs": schema["$defs"]})
    return (jsonschema.Draft202012Validator(top), jsonschema.Draft202012Validator(case))


def _skeleton(value: Any, keys: frozenset[str] | None = None) -> Any:
    """``value`` with every string made '' and every number 0 (types, keys and lengths
    kept; at the top of a test case, only the keys the schema constrains): a test case
    is valid exactly when its skeleton is, and 10,000 test cases have a few skeletons."""
    if isinstance(value, dict):
        return tuple(sorted((k, _skeleton(v)) for k, v in value.items()
                            if keys is None or k in keys))
    if isinstance(value, list):
        return ("[]", *(_skeleton(v) for v in value))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return ""
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    return repr(type(value))


def _unskeleton(sk: Any) -> Any:
    if isinstance(sk, tuple) and sk[:1] == ("[]",):
        return [_unskeleton(v) for v in sk[1:]]
    if isinstance(sk, tuple):
        return {k: _unskeleton(v) for k, v in sk}
    return sk


def _schema_errors(data: dict[str, Any]) -> list[tuple[list[str], str]]:
    """(key path, message) of each schema error: the run report without its test cases
    once, then each distinct test-case skeleton once (a run report of 10,000 test cases
    took 40 s validated whole)."""
    top, case = _run_report_validators()
    errors = [(list(map(str, e.absolute_path)), e.message)
              for e in top.iter_errors(data)]
    constrained = frozenset(_run_report_schema()["$defs"]["testcase"]["properties"]) | {"name"}
    verdict: dict[Any, bool] = {}
    if errors or not isinstance(data.get("runs"), list):
        return errors
    for i, run in enumerate(data["runs"]):
        for j, tc in enumerate(run.get("testcases") or [] if isinstance(run, dict) else []):
            sk = _skeleton(tc, constrained) if isinstance(tc, dict) else _skeleton(tc)
            if sk not in verdict:
                verdict[sk] = case.is_valid(_unskeleton(sk))
            if not verdict[sk]:
                errors += [(["runs", str(i), "testcases", str(j),
                             *map(str, e.absolute_path)], e.message)
                           for e in case.iter_errors(tc)]
                if len(errors) > 50:
                    return errors
    return errors


def load_run_report(path: Path | str) -> dict[str, Any]:
    """A ReFrame JSON run report; a clear error naming the file (and the key) otherwise."""
    try:
        raw = inputs.read_bytes(path, inputs.MAX_RUN_REPORT_BYTES, "the run report")
    except inputs.InputError as err:  # missing, not a regular file, over the cap
        raise RunReportError(str(err)) from None
    return parse_run_report(raw, path)


def read_run_report(reads: inputs.Reader, path: Path | str) -> dict[str, Any]:
    """The run report at ``path``, read by ``reads`` (a sign-off's: its digest is of these
    bytes); RunReportError naming the file otherwise."""
    try:
        raw = reads.read(path, inputs.MAX_RUN_REPORT_BYTES, "the run report", below=False,
                         keep=False)  # parsed once: its digest is all that is kept
    except inputs.InputError as err:  # missing, not a regular file, over the cap
        raise RunReportError(str(err)) from None
    return parse_run_report(raw, path)


def parse_run_report(raw: bytes, path: Path | str) -> dict[str, Any]:
    """The run report ``raw``, the bytes read from ``path`` (named in every error)."""
    path = Path(path)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise RunReportError(f"{path}: not JSON ({str(err)[:200]}); pass the file ReFrame "
                             "wrote with --report-file") from None
    if not isinstance(data, dict) or "session_info" not in data or "runs" not in data:
        raise RunReportError(f"{path}: not a ReFrame run report (no session_info/runs); "
                             "pass the file ReFrame wrote with --report-file")
    for i, run in enumerate(data["runs"] if isinstance(data["runs"], list) else []):
        if not isinstance(run, dict) or not isinstance(run.get("testcases"), list):
            raise RunReportError(f"{path}: runs[{i}].testcases: missing or not a list")
    errors = sorted(_schema_errors(data))
    if errors:
        lines = [f"{path}: {'.'.join(where) or '(top level)'}: {str(message)[:200]}"
                 for where, message in errors[:5]]
        if len(errors) > 5:
            lines.append(f"{path}: (and {len(errors) - 5} more errors)")
        raise RunReportError("\n".join(lines))
    return data


def job_script(testcase: Mapping[str, Any], root: Path | str,
               reads: inputs.Reader | None = None) -> str:
    """The batch script ReFrame submitted (``rfm_job.sh`` in the test's output or stage
    directory), read only below ``root`` (the run's own directory), without a symbolic
    link on the way and within its cap (:class:`fsaccept.core.inputs.Reader`: ``reads``,
    the sign-off's, which reads each file once); else why it is not shown."""
    reads = reads or inputs.Reader(root)
    why = ""
    for key in ("outputdir", "stagedir"):
        d = testcase.get(key)
        if not isinstance(d, str) or not d or not os.path.lexists(Path(d) / "rfm_job.sh"):
            continue
        try:
            return reads.read(Path(d) / "rfm_job.sh", inputs.MAX_JOB_SCRIPT_BYTES,
                              "a job script").decode("utf-8", "replace")
        except inputs.InputError as err:
            why = why or str(err)
    return f"(not shown: {why})" if why else ""
