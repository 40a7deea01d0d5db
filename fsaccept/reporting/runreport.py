"""ReFrame's JSON run report (``--report-file``) read into tests, and the overall verdict.

A test repeated (``--repeat``, ``--reruns``, retries) is one row: its verdict
is the worst of its runs, its figures have n, mean, std, min and max.  The
overall verdict is ACCEPTED only if at least one test tagged ``acceptance`` ran,
every test (fixtures excepted: they are shown with the test that uses them) is
PASS, and all of them used the same reference file (one SHA-256); INCOMPLETE
when nothing failed but some tests were skipped (e.g. a benchmark is not
installed: each says why and how to fix it); NOT ACCEPTED otherwise.

Nothing is parsed from benchmark output again.  Pure functions except
:func:`load_run_report` and :func:`job_script`, which read files.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsaccept.core import inputs
from fsaccept.core.formatting import format_number
from fsaccept.reporting.verdicts import (ACCEPTANCE_TAG, ACCEPTED, INCOMPLETE, NOT_ACCEPTED,
                                         NOT_RUN, PASS, REPEAT_PARAM, SKIPPED, Figure,
                                         RunReportError, Verdict, figures_of, verdict_of, worst)

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
        """'4 of 4 (100 %; 0.9 asked)'; '1382 of 1536 (90 %; 0.9 asked, rounded down)' when
        the reference rounds down."""
        n = self.nodes
        if n is None:
            return "—"
        text = str(n)
        total = self.partition_nodes
        if total:
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


def test_key(testcase: dict[str, Any]) -> tuple[str, str, str, str]:
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


# --------------------------------------------------------------------------- I/O helpers


def _run_report_validator() -> Any:
    import jsonschema
    from importlib import resources
    schema = json.loads(resources.files("fsaccept").joinpath("reporting/run-report.schema.json")
                        .read_text())
    return jsonschema.Draft202012Validator(schema)


def load_run_report(path: Path | str) -> dict[str, Any]:
    """A ReFrame JSON run report; a clear error naming the file (and the key) otherwise."""
    path = Path(path)
    try:
        data = json.loads(inputs.read_bytes(path, inputs.MAX_RUN_REPORT_BYTES,
                                            "the run report").decode("utf-8"))
    except inputs.InputError as err:  # missing, not a regular file, over the cap
        raise RunReportError(str(err)) from None
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
