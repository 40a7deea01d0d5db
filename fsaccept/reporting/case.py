"""One ReFrame test case, read once at the door: the run report's dict becomes a typed,
read-only :class:`Case` (its figures, what the check logged, tags, node list, per-node
figures, job) that every judgement and section uses, instead of each one reading the
dict again.  The door is :func:`typed`: a run report's test cases typed once, each
run's apart (:class:`TypedReport`); the judgements take a :class:`Case`, never a dict.

A :class:`Case` is also a read-only mapping of the record as ReFrame wrote it (``case.get
("reference_sha256")``): what the report shows verbatim is read from there.  Per-node
figures are data (``{figure: {node: value}}``); the text a check logged before they were
(``fig=n1:1.5,n2:2.0; fig2=...``) is parsed here and nowhere else.

Pure: nothing here reads a file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Iterator


class RunReportError(ValueError):
    """A file that is not a usable ReFrame run report; the message names it."""


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
    #: A threshold entry (reference, lower, upper) that is neither null nor a number
    #: ("abc", "50", true): an edited run report, never a usable threshold.
    bad_threshold: bool = False

    @property
    def judged(self) -> bool:
        """Whether ReFrame judged it against a threshold (a reference of 0
        without bounds is ReFrame's "no reference")."""
        return self.lower is not None or self.upper is not None or bool(self.reference)

    @property
    def limited(self) -> bool:
        """Whether a limit was computed and compared (a floor or a ceiling)."""
        return self.lower_limit is not None or self.upper_limit is not None

    @property
    def lower_limit(self) -> float | None:
        """Lowest passing value: reference × (1 + lower)."""
        return _limit(self.reference, self.lower)

    @property
    def upper_limit(self) -> float | None:
        return _limit(self.reference, self.upper)


def _limit(reference: float | None, tolerance: float | None) -> float | None:
    """reference × (1 + tolerance), exactly in decimal; an infinite or NaN part (an edited
    run report: never a usable threshold) gives what floats give, not an exception."""
    if reference is None or tolerance is None:
        return None
    if not (math.isfinite(reference) and math.isfinite(tolerance)):
        return reference * (1 + tolerance)
    return float(Decimal(repr(reference)) * (1 + Decimal(repr(tolerance))))


def _number_or_null(v: Any) -> bool:
    """ReFrame writes a threshold entry as a JSON number or null, nothing else."""
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def as_number(v: Any) -> float | None:
    """A recorded figure or threshold as a number (None: none).  A JSON integer beyond a
    float's range (10**400) is infinite, as ``1e400`` is: every later comparison and sum
    takes it (as an int it raised OverflowError), and it is never a measurement."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, int):
        try:
            float(v)
        except OverflowError:
            return math.inf if v > 0 else -math.inf
    if isinstance(v, (int, float)):
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _figures(record: Mapping[str, Any]) -> tuple[Figure, ...]:
    """The figures of a run-report test case, in the order the check declared them.

    Keys are ``system:partition:name``; the name is the part after the last colon.
    """
    out = []
    for key, values in (record.get("perfvalues") or {}).items():
        if not isinstance(values, (list, tuple)) or len(values) < 5:
            raise RunReportError(f"perfvalues[{key!r}] of {record.get('name')!r}: expected "
                                 f"[value, reference, lower, upper, unit, result], got {values!r}")
        value, ref, lower, upper, unit, *rest = values
        out.append(Figure(name=key.rsplit(":", 1)[-1], value=as_number(value), unit=unit or "",
                          reference=as_number(ref), lower=as_number(lower), upper=as_number(upper),
                          result=rest[0] if rest else None,
                          bad_threshold=any(not _number_or_null(x) for x in (ref, lower, upper))))
    return tuple(out)


# --------------------------------------------------------------------------- per node


def parse_per_node_text(text: str) -> dict[str, dict[str, float]]:
    """figure → node → value from a logged ``fig=n1:1.5,n2:2.0; fig2=...`` string (how
    the checks logged ``per_node_figures`` before it was data); parts that do not fit are
    ignored."""
    out: dict[str, dict[str, float]] = {}
    for part in text.split(";"):
        fig, sep, pairs = part.strip().partition("=")
        if not sep or not fig:
            continue
        for pair in pairs.split(","):
            node, sep2, value = pair.strip().rpartition(":")
            v = as_number(value) if sep2 else None
            if node and v is not None and math.isfinite(v):
                out.setdefault(fig.strip(), {})[node] = float(v)
    return out


def is_figure_map(value: Any) -> bool:
    """Whether a logged value is per-node figures as data: {figure: {node: value}}."""
    return isinstance(value, Mapping) and bool(value) and all(
        isinstance(v, Mapping) for v in value.values())


def per_node_of(key: str, value: Any) -> dict[str, dict[str, float]]:
    """figure → node → value of one logged ``<anything>per_node<anything>`` variable:
    {figure: {node: value}} (``per_node_figures``), the text form of the same, or a
    mapping {node: value} of the one figure the key names (the key without
    ``per_node``); values that are not numbers are left out."""
    if isinstance(value, str):
        return parse_per_node_text(value)
    if not isinstance(value, Mapping):
        return {}
    figures = value if is_figure_map(value) else {
        key.replace("per_node", "").strip("_") or key: value}
    out: dict[str, dict[str, float]] = {}
    for fig, nodes in figures.items():
        for node, v in nodes.items():
            number = as_number(v)
            if number is not None:
                out.setdefault(str(fig), {})[str(node)] = float(number)
    return out


def _per_node(variables: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for key, value in variables.items():
        if "per_node" in key:
            for fig, nodes in per_node_of(key, value).items():
                out.setdefault(fig, {}).update(nodes)
    return out


# --------------------------------------------------------------------------- the case


@dataclass(frozen=True)
class Job:
    """The job a test case ran as."""

    jobid: str  # '' when it did not get one
    nodelist: tuple[str, ...]  # the nodes Slurm gave it, when recorded as a list
    completion_time: float | None  # Unix time
    submit_time: float | None = None  # Unix time (ReFrame's, once sbatch returned)


@dataclass(frozen=True, eq=False)
class Case(Mapping):
    """A run-report test case read once: typed fields for what is judged and drawn, and
    the record itself, read-only, for what is shown as ReFrame wrote it."""

    record: Mapping[str, Any]
    name: str
    figures: tuple[Figure, ...]
    #: What the check logged beyond ReFrame's own keys (``loggable=True``).
    variables: Mapping[str, Any]
    tags: tuple[str, ...]
    #: figure → node → value, from every ``*per_node*`` variable.
    per_node: Mapping[str, Mapping[str, float]]
    job: Job

    def __getitem__(self, key: str) -> Any:
        return self.record[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.record)

    def __len__(self) -> int:
        return len(self.record)


def case_of(record: Mapping[str, Any]) -> Case:
    """The :class:`Case` of a run-report test case (itself when it already is one).
    RunReportError when its figures are not ReFrame's (the schema refuses that first)."""
    if isinstance(record, Case):
        return record
    variables = {k: v for k, v in record.items() if k not in RFM_KEYS}
    nodelist = record.get("job_nodelist")
    done = record.get("job_completion_time_unix")
    submitted = record.get("job_submit_time")
    tags = record.get("tags")
    return Case(
        record=record, name=str(record.get("name", "")), figures=_figures(record),
        variables=variables,
        tags=tuple(map(str, tags)) if isinstance(tags, list) else (),
        per_node=_per_node(variables),
        job=Job(jobid=str(record.get("jobid") or ""),
                nodelist=tuple(map(str, nodelist)) if isinstance(nodelist, list) else (),
                completion_time=done if _number_or_null(done) else None,
                submit_time=submitted if _number_or_null(submitted) else None))


@dataclass(frozen=True, eq=False)
class TypedReport:
    """A run report with every test case typed once: what the sign-off judges."""

    #: The run report as parsed (``session_info``, each run's own counts).
    record: Mapping[str, Any]
    #: Each run's test cases (retries and reruns: a run each), in run order.
    runs: tuple[tuple[Case, ...], ...]
    #: Every test case of every run, in run order.
    cases: tuple[Case, ...]

    @property
    def info(self) -> Mapping[str, Any]:
        info = self.record.get("session_info")
        return info if isinstance(info, Mapping) else {}


def typed(report: Mapping[str, Any] | TypedReport) -> TypedReport:
    """The door: every test case of the run report typed into a :class:`Case`, once
    (itself when it already is typed)."""
    if isinstance(report, TypedReport):
        return report
    runs = tuple(tuple(case_of(tc) for tc in run.get("testcases", []))
                 for run in report.get("runs", []))
    return TypedReport(record=report, runs=runs, cases=tuple(c for r in runs for c in r))
