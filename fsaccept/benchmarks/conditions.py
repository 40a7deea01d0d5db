"""Every condition a session runs the benchmarks under or beside, one record each
(:class:`fsaccept.benchmarks.catalogue.Condition`).

A condition's checks are read from the catalogue (:mod:`fsaccept.benchmarks.registry`):
a degraded-mode test's record says ``degraded``, a filled re-run's ``filled``, a sweep's
role ``scaling``, fio's soak and noisy neighbour are kinds of fio (``command.KINDS``),
the semantics program, quota, the target survey and the network check are benchmarks of
their own.  ``fsaccept reference
--list`` and the docs' conditions table (:mod:`fsaccept.suite.listing`) read these
records; ``tests/unit/test_conditions.py`` holds each to its checks, its report section
and its fragments.  docs/dev/adding-a-condition.md says how to add one.
"""

from __future__ import annotations

from collections.abc import Iterable

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.catalogue import FIXTURE, Condition, TestSpec
from fsaccept.benchmarks.fio import command as fio_command


def _checks(tests: Iterable[TestSpec]) -> tuple[str, ...]:
    """The class names of ``tests`` but their fixtures (a fixture follows its test)."""
    return tuple(t.check for t in tests if t.role != FIXTURE)


def _entries(tests: Iterable[TestSpec]) -> tuple[str, ...]:
    """The reference entries ``tests`` read (``tests.<key>``)."""
    return tuple(dict.fromkeys(f"tests.{t.key}" for t in tests if t.key))


def _fio_kind(flag: str) -> tuple[TestSpec, ...]:
    """fio's tests whose kind (``command.KINDS``) says ``flag`` (``soak``...)."""
    return tuple(t for t in registry.BENCHMARKS["fio"].tests
                 if getattr(fio_command.KINDS[t.attrs["kind"]], flag))


def _folder(tests: Iterable[TestSpec]) -> str:
    """The opt-in folder of ``tests``: a test's own, else its benchmark's."""
    return next(t.checks_dir or registry.BENCHMARKS[t.benchmark].checks_dir
                for t in tests)


_SOAK, _INTERFERENCE = _fio_kind("soak"), _fio_kind("interference")
_SEMANTICS = registry.BENCHMARKS["semantics"].tests
_QUOTA = registry.BENCHMARKS["quota"].tests
_SURVEY = registry.BENCHMARKS["survey"].tests + registry.BENCHMARKS["network"].tests

#: Every condition by its name, in the order the report's sections come.
CONDITIONS: dict[str, Condition] = {c.name: c for c in (
    Condition(name="semantics", descr="fsaccept's own MPI program: each case's writer and "
              "reader on different nodes (visibility, locks, rename, links, namespace "
              "scale, root squash, ACLs)",
              reference=_entries(_SEMANTICS), checks=_checks(_SEMANTICS),
              judges=("reporting/signoff/semantics.py",),
              report="reporting/semantics.py", section="Semantics and features",
              fragments=("words/semantics.j2",), checks_dir=_folder(_SEMANTICS),
              page="semantics.md"),
    Condition(name="quota", descr="a quota the site's command sets: EDQUOT within the "
              "slack, the reported usage following the data",
              reference=_entries(_QUOTA), checks=_checks(_QUOTA),
              judges=("reporting/signoff/quota.py",),
              report="reporting/semantics.py", section="Semantics and features",
              fragments=("words/semantics.j2",), checks_dir=_folder(_QUOTA),
              page="quota.md"),
    Condition(name="components", descr="each storage target written alone from the "
              "clients, in rounds; a target far below the median named with its server; "
              "iperf3 from each node to the servers, alone and all at once, the slow link "
              "named; each aggregate bandwidth against the bound they set",
              reference=(*_entries(_SURVEY), "components"), checks=_checks(_SURVEY),
              judges=("reporting/signoff/survey.py", "reporting/signoff/network.py"),
              report="reporting/components.py", section="Components",
              fragments=("words/components.j2", "words/network.j2", "words/bound.j2"),
              checks_dir=_folder(_SURVEY),
              page="components.md"),
    Condition(name="soak", descr="fio writing for hours, judged on its time series: "
              "stalls, drift, a slow node",
              reference=_entries(_SOAK), checks=_checks(_SOAK),
              judges=("reporting/signoff/soak.py",),
              report="reporting/soak.py", section="Soak:",
              fragments=("words/soak.j2",), checks_dir=_folder(_SOAK), page="soak.md"),
    Condition(name="interference", descr="a noisy neighbour: the victims' p99 alone and "
              "beside the aggressors, in one job, the overlap proven",
              reference=_entries(_INTERFERENCE), checks=_checks(_INTERFERENCE),
              judges=("reporting/signoff/interference.py",),
              report="reporting/interference.py", section="Interference:",
              fragments=("words/interference.j2",), checks_dir=_folder(_INTERFERENCE),
              page="interference.md"),
    Condition(name="degraded", descr="a benchmark test run while a storage server is "
              "down, the fault proven on every node",
              reference=("degraded",), checks=_checks(registry.DEGRADED),
              judges=("reporting/signoff/degraded.py",),
              report="reporting/degraded.py", section="Degraded mode",
              checks_dir="degraded", page="degraded.md"),
    Condition(name="fill", descr="the target filled to a declared level, then tests run "
              "again and judged against their empty figures",
              reference=("fill",),
              checks=_checks((registry.FILL_TARGET, *registry.FILLED)),
              judges=("reporting/signoff/fill.py",),
              report="reporting/fill.py", section="Fill level",
              fragments=("words/fill-contract.j2", "words/fill.j2"), checks_dir="fill",
              page="fill.md"),
    Condition(name="scaling", descr="a test swept along a dimension (nodes, ranks per "
              "node, transfer size, stripes), its curve judged",
              reference=("sweeps",), checks=_checks(registry.SCALING_TESTS),
              judges=("reporting/scaling.py",),
              report="reporting/scaling.py", section="Scaling", checks_dir="scaling",
              page="scaling.md"),
)}
