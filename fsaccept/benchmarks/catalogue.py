"""The records every benchmark declares itself with, once (``<tool>/spec.py``).

- :class:`Benchmark`: one tool: its binary, Spack package, version name, and its
  functions as direct references (parser, entry rules, re-read rules...), the way IOR's
  ``aiori-POSIX.c`` fills its own interface record.
- :class:`Condition`: one condition a session runs the benchmarks under or beside
  (degraded mode, a sweep, a fill level, a noisy neighbour, a soak, the semantics
  program, quota): the reference-file keys it reads, its checks, its report section and
  its template fragments.  ``conditions.py`` holds the records.
- :class:`TestSpec`: one test of fsaccept's catalogue, one record per ReFrame class in
  ``checks/`` (fixtures and probes included): its reference key, its role, the figures
  it reports and what makes it differ (IOR's phase, fio's kind...).  The checks read
  these attributes from here, so a check's class body is its docstring and little else;
  and the sign-off judges a re-read test case by its class's record, never by the
  ``tags`` or ``reference_key`` its run report carries (which can be edited).

This module imports nothing of fsaccept: the records are plain data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

#: What a test is for.  An acceptance test is judged against its reference entry and
#: needs a judged figure; a fixture prepares data for one (no figure); a preflight check
#: (the launch check, the data-reduction probe) judges no threshold; a scaling point is
#: one point of a sweep (``checks/scaling/``), judged with its curve by the reference's
#: ``sweeps:`` section, not against its test's threshold.
ACCEPTANCE, FIXTURE, PREFLIGHT = "acceptance", "fixture", "preflight"
SCALING = "scaling"
ROLES = (ACCEPTANCE, FIXTURE, PREFLIGHT, SCALING)
#: Whether an acceptance test runs again at the reference's ``fill:`` level: by default
#: (unless ``fill.tests`` lists others), when listed, or never ('': its figure is no rate
#: or time a fuller file system slows, or it is not a single run of a benchmark).
FILL_DEFAULT, FILL_OPTIONAL = "default", "optional"
FILL_CHOICES = ("", FILL_DEFAULT, FILL_OPTIONAL)

#: What a recorded command lacks (a path, a seed) stands as this in the arguments a
#: record's ``contract_options`` builds from it: a command without them is not the one
#: the live check builds.
MISSING = "MISSING"

#: The figure kinds a bound is derived for (``core.components.bound``): bandwidth
#: written, bandwidth read.  A test's ``bounded`` figures and a component test's
#: ``ceiling_kinds`` name them.
BOUND_KINDS = ("write", "read")

#: A deadline-bound phase whose dataset holds less than this many times what the phase
#: consumes in its deadline gets a warning line in the report, naming the reference key
#: to raise (:class:`DatasetMargin`).  Never a verdict: a phase that ends before its
#: deadline is INVALID by its own rule, whatever its margin.
DATASET_MARGIN_WARNING = 1.5


@dataclass(frozen=True)
class DatasetMargin:
    """How much data a deadline-bound phase had, against what it consumed: the dataset
    (what its generation laid down, else the configured size) over what the phase moves
    in its deadline at its rate (its bytes moved; scaled up to the deadline when it
    ended first)."""

    #: The bytes the phase could read: what the dataset's generation laid down, else the
    #: configured size.
    available_bytes: int
    #: The bytes the phase moves in its deadline at its rate.
    consumed_bytes: int
    #: The phase's deadline, in seconds.
    deadline_s: int
    #: The reference entry's keys that size the dataset (raise one to widen the margin).
    sized_by: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        return self.available_bytes / self.consumed_bytes

    @property
    def low(self) -> bool:
        """Under :data:`DATASET_MARGIN_WARNING`."""
        return self.ratio < DATASET_MARGIN_WARNING


@dataclass(frozen=True)
class TestSpec:
    """One test of the catalogue: a ReFrame class of ``checks/``, by its class name."""

    __test__ = False  # not a pytest test class

    #: The class name in ``checks/`` (a ReFrame test case's name up to its first blank).
    check: str
    #: ``acceptance``, ``fixture`` or ``preflight``.
    role: str
    #: One line: what it measures (the check's ``descr``).
    descr: str
    #: Its entry under ``tests:`` of the reference file ('' for none: the probes).
    key: str = ""
    #: The benchmark that runs it ('' for the launch check and the data-reduction probe).
    benchmark: str = ""
    #: Tags besides the role (``bandwidth``, ``iops``, ``metadata``, ``client``...).
    tags: tuple[str, ...] = ()
    #: Every figure it may report: a name, or a ``^regex$`` for figures named after the
    #: entry (fio's block size).  The first is its main figure: the one a reference entry
    #: with a single threshold judges.
    figures: tuple[str, ...] = ()
    #: The check's attributes that follow from what it is (IOR: ``phase``, ``operation``,
    #: ``figure_kind``; fio: ``kind``; mdtest: ``unique_dir_per_rank``).
    attrs: Mapping[str, Any] = field(default_factory=dict)
    #: The JSON Schema ``$ref`` its reference entry is validated against.
    schema: str = ""
    #: Thresholds it always applies, whatever the reference file says: figure ->
    #: ReFrame's (value, lower, upper, unit) (data integrity: no transfer read back wrong).
    fixed_thresholds: Mapping[str, tuple[float, float | None, float | None, str]] = field(
        default_factory=dict)
    #: A count's figure -> the loggable variable that names what it counted (the slow
    #: targets with their servers): a FAIL of that figure says it.
    named_by: Mapping[str, str] = field(default_factory=dict)
    #: Figures of other units than counts whose 0 is a measurement (a soak's longest
    #: stall, its drift): never "0 although I/O was done".
    may_be_zero: tuple[str, ...] = ()
    #: Whether its figure means nothing when measured with data the file system reduces
    #: (a rate); the integrity check's count of wrong transfers does not depend on it.
    reduction_matters: bool = True
    #: Whether it runs a job on the partition's nodes; False for a build (the semantics
    #: program's, compiled on the login node): no nodes, no target, no contract's
    #: placement to hold it to.
    runs_job: bool = True
    #: A degraded-mode test: measured while a server is down (its fault proven on every
    #: node), judged against the reference's ``degraded:`` fraction of its healthy
    #: thresholds, and required only in a degraded-mode session.
    degraded: bool = False
    #: Its folder under ``checks/`` when it alone of its benchmark is opt-in (fio's soak:
    #: ``checks/soak``); a whole benchmark's is its record's ``checks_dir``.
    checks_dir: str = ""
    #: Whether it runs again at the declared fill level (:data:`FILL_CHOICES`).
    fill: str = ""
    #: A filled re-run: measured once the filler brought the target to the reference's
    #: ``fill:`` level, judged against its empty counterpart's figures (the test of its
    #: key that is not filled, in the same session).
    filled: bool = False
    #: The component below the file system it measures (``clients``, ``network``,
    #: ``targets``: ``core.components.COMPONENTS``); '' for a test of the file system.
    #: The Components section lays out its rows by it, and its ceiling enters the bound.
    component: str = ""
    #: A component test's: the figure kinds (:data:`BOUND_KINDS`) its ceiling bounds
    #: (the target survey writes, so the targets bound what is written).
    ceiling_kinds: tuple[str, ...] = ()
    #: Its figures judged against the bound of the components, each with its kind
    #: (:data:`BOUND_KINDS`): an aggregate bandwidth of the whole job, never a node's.
    #: Its degraded, filled and swept variants have none: the bound is the healthy,
    #: empty file system's on the test's own nodes.
    bounded: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"{self.check}: role {self.role!r} is not one of {ROLES}")
        if self.fill not in FILL_CHOICES:
            raise ValueError(f"{self.check}: fill {self.fill!r} is not one of {FILL_CHOICES}")
        bad = sorted(k for k in (*self.ceiling_kinds, *self.bounded.values())
                     if k not in BOUND_KINDS)
        if bad:
            raise ValueError(f"{self.check}: bound kind {bad[0]!r} is not one of "
                             f"{BOUND_KINDS}")
        if self.ceiling_kinds and not self.component:
            raise ValueError(f"{self.check}: ceiling kinds without a component")
        object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))
        object.__setattr__(self, "bounded", MappingProxyType(dict(self.bounded)))

    @property
    def all_tags(self) -> frozenset[str]:
        """The ReFrame tags it carries (a fixture has none: ``-t`` never selects one)."""
        if self.role == FIXTURE:
            return frozenset()
        return frozenset((self.role, *self.tags))

    @property
    def main_figure(self) -> str:
        return self.figures[0] if self.figures else ""

    def reports(self, figure: str) -> bool:
        """Whether ``figure`` is one this test may report."""
        return any(_matches(pattern, figure) for pattern in self.figures)


#: A degraded-mode test's class name: this before its healthy counterpart's.
DEGRADED_PREFIX = "Degraded"


def degraded_variant(spec: TestSpec, fault_figures: tuple[str, ...],
                     after_recovery: bool = False) -> TestSpec:
    """The degraded-mode counterpart of a test of the catalogue (of its fixture: the
    same data, written healthy before the fault, under a name of its own);
    ``after_recovery``: its benchmark runs once the file system has recovered (the data
    written before the fault, read back)."""
    if spec.role == FIXTURE:
        return replace(spec, check=DEGRADED_PREFIX + spec.check,
                       descr=spec.descr + " (degraded mode, written healthy)")
    return replace(spec, check=DEGRADED_PREFIX + spec.check, fill="",
                   descr=spec.descr + ", while a storage server is down",
                   tags=(*spec.tags, "degraded"), figures=(*spec.figures, *fault_figures),
                   attrs={**spec.attrs, "benchmark_after_recovery": after_recovery},
                   degraded=True, bounded={})


#: A filled re-run's class name: this before its empty counterpart's.
FILLED_PREFIX = "Filled"


def filled_variant(spec: TestSpec) -> TestSpec:
    """The filled re-run of a test of the catalogue (of its fixture: its data written on
    the filled target, under a name of its own)."""
    if spec.role == FIXTURE:
        return replace(spec, check=FILLED_PREFIX + spec.check, fill="",
                       descr=spec.descr + " (on the filled target)")
    return replace(spec, check=FILLED_PREFIX + spec.check, fill="",
                   descr=spec.descr + ", at the declared fill level",
                   tags=(*spec.tags, "filled"), filled=True, bounded={})


#: A scaling sweep's class name: this, its healthy counterpart's, then the dimension's.
SCALING_PREFIX = "Scaling"
SCALING_SUFFIXES = {"nodes": "Nodes", "ranks_per_node": "Ranks", "transfer_size": "Transfer",
                    "stripe": "Stripes"}


def scaling_variant(spec: TestSpec, dimension: str) -> TestSpec:
    """A test of the catalogue swept along ``dimension`` (``nodes``, ``ranks_per_node``,
    ``transfer_size``): one ReFrame class whose parameter is the point (its fixture: the
    same data at the same point, under a name of its own)."""
    check = SCALING_PREFIX + spec.check + SCALING_SUFFIXES[dimension]
    attrs = {**spec.attrs, "sweep_dimension": dimension}
    if spec.role == FIXTURE:
        return replace(spec, check=check, attrs=attrs,
                       descr=spec.descr + f" (scaling sweep over {dimension})")
    return replace(spec, check=check, role=SCALING, attrs=attrs, fill="", bounded={},
                   descr=spec.descr + f", swept over {dimension}")


def _matches(pattern: str, name: str) -> bool:
    return (re.fullmatch(pattern[1:-1], name) is not None if pattern.startswith("^")
            else pattern == name)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark tool, with its functions as direct references."""

    #: ``fsaccept parse <name>``; also its folder under ``fsaccept/benchmarks/``.
    name: str
    #: The executable a job runs (looked up on PATH or in the Spack view).
    binary: str
    #: The Spack package that builds it (mdtest and md-workbench come with IOR).
    spack_package: str
    #: Its name in ``data/tested_versions.yaml`` and ``data/known_bad_versions.yaml``
    #: (mdtest and md-workbench print IOR's version).
    version_name: str
    #: Figure kinds its output reports (what a known bug may affect).
    figure_kinds: tuple[str, ...]
    #: Its text output -> a parsed run with ``to_dict()``.
    parser: Callable[[str], Any]
    #: Its tests, in the order the checks declare them.
    tests: tuple[TestSpec, ...] = ()
    #: Reads its JSON summary file, if it writes one.
    json_parser: Callable[[str], Any] | None = None
    #: Reference keys it owns besides its tests' own: a ``^regex$`` -> a JSON Schema
    #: ``$ref`` (a site's variants of one test, e.g. ``md_workbench_small``).
    extra_keys: Mapping[str, str] = field(default_factory=dict)
    #: (where, entry) -> errors the schema cannot express (block size a multiple of the
    #: transfer size...).
    entry_rules: Callable[[str, dict[str, Any]], list[str]] | None = None
    #: (where, entry, target fstype) -> errors between an entry and the target (Lustre
    #: striping on another file system).
    target_rules: Callable[[str, dict[str, Any], str], list[str]] | None = None
    #: run -> (INVALID reasons, rules not applied): the live check's rules a re-read
    #: output can be held to (None: its parser's findings are all there is).
    reread_rules: Callable[[Any], tuple[list[str], list[str]]] | None = None
    #: (run, key, entry) -> (reasons, judged figure, rules not applied): a reference
    #: entry's rules for ``fsaccept parse --reference``.
    reference_rules: Callable[..., tuple[list[str], Any, list[str]]] | None = None
    #: pattern -> whether the data it writes is reducible (compressible or repeated).
    pattern_reducible: Callable[[str], bool] | None = None
    #: The data patterns it writes (a reference entry's ``data_pattern``): a run report
    #: naming another was not written by fsaccept.
    data_patterns: tuple[str, ...] = ()
    #: Characters it cannot take in a path (character -> why): a target path holding one
    #: is refused (``fsaccept reference`` and every run, before any job).
    unsafe_path_chars: Mapping[str, str] = field(default_factory=dict)
    #: Its checks that have a degraded-mode counterpart (``checks/degraded/``), fixtures
    #: included: the contract's high-availability clause covers these.
    degraded: tuple[str, ...] = ()
    #: Those of them whose benchmark runs after the recovery, not while degraded.
    degraded_after_recovery: tuple[str, ...] = ()
    #: Reads its results from a path itself, a directory or a file (IO500's result
    #: directory): ``fsaccept parse`` passes the path, not the text; ValueError
    #: (``PATH: message``) for what it cannot read.
    path_parser: Callable[[str], Any] | None = None
    #: version -> its note (``tested``...), for a tool whose versions are not release
    #: numbers (IO500's tags); None: ``data/tested_versions.yaml``.
    version_note: Callable[[str | None], str] | None = None
    #: Its checks that scaling sweeps measure (``checks/scaling/``), fixtures included,
    #: each with the dimensions it is swept along (``fsaccept.core.scaling.DIMENSIONS``).
    scaling: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Its program is fsaccept's own, built by its check from ``checks/src/`` (ReFrame's
    #: build system): no site, Spack or module provides it.
    built_by_check: bool = False
    #: (its job's stdout, a test of it, the test's reference entry or None) -> (the
    #: figures that output gives the test, named and computed as the live check reports
    #: them; the figure names it answers for): the sign-off rebuilds the test's figures
    #: with it, given the verified reference's entry (None: they are checked otherwise).
    output_figures: Callable[[str, TestSpec, Mapping[str, Any] | None],
                             tuple[dict[str, float], frozenset[str]]] | None = None
    #: (its job's stdout and stderr, as the live check reads them; a test of it; the
    #: test's reference entry or None; the ranks per node the case recorded) -> (the
    #: INVALID reasons the live check's own rules give that output, worded as live; and
    #: when there is none, the variables the live check records from it, by name, e.g.
    #: IOR's per-node figures): the sign-off judges the test's verdict again with it, and
    #: requires the case's variables to be those (None: its verdict is judged otherwise).
    output_reasons: Callable[[str, str, TestSpec, Mapping[str, Any] | None, Any],
                             tuple[list[str], dict[str, Any]]] | None = None
    #: Its checks' folder under ``checks/`` when they are opt-in (IO500: the site's own
    #: binary; semantics: it needs a client per node): loaded only for a reference file
    #: that defines one of its tests (``fsaccept reference FILE --check-dirs``).  ""
    #: for checks in ``checks/`` itself, which every session loads.
    checks_dir: str = ""
    #: (a reference entry of one of its tests) -> (the node fraction it asks, None: one
    #: node; the ranks per node): how the live check places the test's job, and what the
    #: sign-off holds the run to (nodes, tasks, ranks per node).  None: the entry's
    #: ``node_fraction`` and ``ranks_per_node`` (``core.placement.entry_placement``).
    placement: Callable[[Mapping[str, Any]], tuple[float | None, int]] | None = None
    #: (a test of it, its reference entry, the ranks the contract asks, an argument list
    #: as recorded) -> the arguments the live check builds for that test, its paths and
    #: seeds (what a run alone decides) taken from the recorded ones: the sign-off
    #: requires the recorded command to be these.  The function returns None for a test
    #: held by its record instead (fio's interference kind: its two groups' commands are
    #: rebuilt from its kept files); the field None: no command is checked.
    contract_options: Callable[[TestSpec, Mapping[str, Any], int, list[str]],
                               list[str] | None] | None = None
    #: (its job's stdout) -> (the tasks, the nodes, the arguments its output's own header
    #: prints; None where it prints none).
    output_header: Callable[[str], tuple[int | None, int | None, list[str] | None]] | None = None
    #: Its options the entry sizes (IOR's ``-t -b -s -D``, mdtest's ``-n``, fio's
    #: ``--runtime``...): its output's own header, or each node's report, must give them
    #: as the contract asks.
    sized_options: tuple[str, ...] = ()
    #: (its job's stdout, a test of it) -> the dataset margin of the test's deadline-bound
    #: phase (:class:`DatasetMargin`; None: no deadline, or nothing to tell it from): the
    #: live check records it and the report shows it, rebuilt from the output.
    dataset_margin: Callable[[str, TestSpec], DatasetMargin | None] | None = None
    #: (a node's parsed report) -> the options it says it ran with, as arguments (fio's
    #: JSON job options): its ``sized_options`` must be those the contract asks.
    report_options: Callable[[Any], list[str]] | None = None

    @property
    def schema_file(self) -> str:
        """Its reference-entry schema, a resource of the package."""
        return f"benchmarks/{self.name.replace('-', '_')}/schema.json"

    @property
    def reference_keys(self) -> dict[str, str]:
        """Every reference key it owns (an exact key or a ``^regex$``) -> its ``$ref``."""
        return {**{t.key: t.schema for t in self.tests if t.key and t.role == ACCEPTANCE},
                **self.extra_keys}

    def parse(self, text: str, json_summary: bool = False) -> Any:
        parser = self.json_parser if json_summary else self.parser
        if parser is None:
            raise ValueError(f"{self.name} writes no JSON summary")
        return parser(text)


@dataclass(frozen=True)
class Condition:
    """One condition a session runs the benchmarks under or beside, declared once
    (:data:`fsaccept.benchmarks.conditions.CONDITIONS`): the listing, the docs' tables and
    the tests that hold its parts together read it.  Its checks are derived from the
    catalogue (a test's ``degraded``, ``filled``, fio's kind...), never typed again."""

    #: Its name, one word (``degraded``, ``soak``...).
    name: str
    #: One line: what it runs or changes.
    descr: str
    #: The reference-file keys it reads: a section (``degraded``, ``sweeps``, ``fill``)
    #: or a test's entry (``tests.fio_soak``).
    reference: tuple[str, ...]
    #: The ReFrame class names of its checks (fixtures excepted: they follow their test).
    checks: tuple[str, ...]
    #: The sign-off's modules that judge its evidence again when a run report is re-read,
    #: by the live checks' own functions, under ``fsaccept/``, one per owner
    #: (``("reporting/signoff/degraded.py",)``; a row of ``reporting/evidence.py``'s
    #: ``JUDGES`` reaches each).  A condition judged on its cases' figures alone (a
    #: scaling curve) names its report module.
    judges: tuple[str, ...]
    #: The sign-off's module that lays out its report section, under ``fsaccept/``
    #: (``reporting/degraded.py``).
    report: str
    #: Its section's title in the report, as both templates print it (a title with a
    #: test's name ends at the colon: ``Soak:``).
    section: str
    #: Its words' fragments the Markdown and HTML reports share, under
    #: ``fsaccept/reporting/templates/`` (``words/soak.j2``); none: each report words it.
    fragments: tuple[str, ...] = ()
    #: Its folder under ``checks/``: loaded only for the sessions that run it.
    checks_dir: str = ""
    #: Its user page, under ``docs/user/``.
    page: str = ""
