"""Every benchmark fsaccept runs and every test of its catalogue, in one place.

Each benchmark declares itself once, in ``<tool>/spec.py`` (its record, with direct
function references, and its tests); this module gathers them, with the two preflight
checks that belong to no benchmark.  The CLI (``fsaccept parse KIND``), provenance (which
binaries a job records), the reference schema (which ``tests:`` keys are allowed), the
version rules, the checks' own attributes (``fsaccept.rfm.catalogued``) and the sign-off's
re-read (which test is an acceptance test, judged against which entry) read it.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from fsaccept.benchmarks.catalogue import (ACCEPTANCE, FILL_DEFAULT,  # noqa: F401
                                           FIXTURE, PREFLIGHT, SCALING, Benchmark, TestSpec,
                                           degraded_variant, filled_variant,
                                           scaling_variant)
from fsaccept.benchmarks.fio import spec as fio_spec
from fsaccept.benchmarks.io500 import spec as io500_spec
from fsaccept.benchmarks.ior import spec as ior_spec
from fsaccept.benchmarks.md_workbench import spec as md_workbench_spec
from fsaccept.benchmarks.mdtest import spec as mdtest_spec
from fsaccept.benchmarks.network import spec as network_spec
from fsaccept.benchmarks.quota import spec as quota_spec
from fsaccept.benchmarks.semantics import spec as semantics_spec
from fsaccept.benchmarks.survey import spec as survey_spec
from fsaccept.core import degraded as fault
from fsaccept.core import placement
from fsaccept.core.reduction import PATTERNS as REDUCTION_PATTERNS

BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    ior_spec.BENCHMARK, mdtest_spec.BENCHMARK, md_workbench_spec.BENCHMARK,
    fio_spec.BENCHMARK, io500_spec.BENCHMARK, semantics_spec.BENCHMARK,
    quota_spec.BENCHMARK, survey_spec.BENCHMARK, network_spec.BENCHMARK)}

#: The checks that run before the benchmarks and judge no threshold, and the fixture
#: that finds every benchmark test's binaries.
PROBES = (
    TestSpec(check="BenchmarkBinaries", role=FIXTURE,
             descr="IOR, mdtest and fio for this partition, and their provenance"),
    TestSpec(check="MPILaunchSanity", role=PREFLIGHT,
             descr="MPI launch across all idle nodes (srun, block distribution)"),
    # Its ratios are findings that decide other tests' validity, never figures judged
    # against a threshold.
    TestSpec(check="DataReductionProbe", role=PREFLIGHT, tags=("reduction",),
             descr="data reduction: space taken by zeros, IOR's default pattern and "
                   "random data",
             figures=("free_space_noise",
                      f"^({'|'.join(p.replace('-', '_') for p in REDUCTION_PATTERNS)})"
                      "_reduction$")),
)

#: The degraded-mode tests (``checks/degraded/``): each benchmark names its checks that
#: have one.
DEGRADED = tuple(degraded_variant(t, fault.FIGURES, t.check in b.degraded_after_recovery)
                 for b in BENCHMARKS.values() for t in b.tests if t.check in b.degraded)

#: The scaling sweeps' tests (``checks/scaling/``): each benchmark names its checks that
#: are swept, and along which dimensions.
SCALING_TESTS = tuple(scaling_variant(t, d) for b in BENCHMARKS.values()
                      for t in b.tests for d in b.scaling.get(t.check, ()))

#: The fill to the reference's ``fill:`` level (``checks/fill/``): the job that writes the
#: filler, between the tests run empty and the same tests run filled; it judges no
#: threshold (docs/user/fill.md).
FILL_TARGET = TestSpec(check="FillTarget", role=PREFLIGHT, tags=("fill",),
                       descr="the filler: irreducible data brings the target to the "
                             "reference's fill: level (df before and once filled, every "
                             "node's bytes, files and ageing rounds)")


def _filled() -> tuple[TestSpec, ...]:
    keys = {t.key for b in BENCHMARKS.values() for t in b.tests
            if t.role == ACCEPTANCE and t.fill}
    return tuple(filled_variant(t) for b in BENCHMARKS.values() for t in b.tests
                 if t.key in keys and (t.fill or t.role == FIXTURE))


#: The filled re-runs (``checks/fill/``, ``Filled<Check>``): each acceptance test that can
#: run again at the declared fill level, and the fixtures of its key (its dataset,
#: written on the filled target).
FILLED = _filled()

#: Every test of the catalogue by its class name, in the order of the checks.
TESTS: dict[str, TestSpec] = {t.check: t for t in (
    *PROBES, *(t for b in BENCHMARKS.values() for t in b.tests), *DEGRADED,
    *SCALING_TESTS, FILL_TARGET, *FILLED)}


def degraded_keys() -> set[str]:
    """The reference keys a degraded-mode test reads (``degraded.tests`` may list)."""
    return {t.key for t in DEGRADED if t.degraded}


def fill_checks() -> dict[str, TestSpec]:
    """The acceptance tests that can run again at the reference's ``fill:`` level, by
    class name (``fill.tests`` may list them)."""
    return {t.check: t for t in TESTS.values()
            if t.role == ACCEPTANCE and t.fill and not t.filled}


def fill_defaults() -> list[str]:
    """The class names re-run filled when ``fill.tests`` lists none (those the file has
    an entry for)."""
    return [c for c, t in fill_checks().items() if t.fill == FILL_DEFAULT]


def filled_tests() -> tuple[TestSpec, ...]:
    """The filled re-runs (``Filled<Check>``): each test that can run filled, and the
    fixtures of its key (its dataset, written on the filled target)."""
    return FILLED


def scaling_keys() -> dict[str, tuple[str, ...]]:
    """The reference keys scaling sweeps measure -> the dimensions each is swept along."""
    out: dict[str, tuple[str, ...]] = {}
    for t in SCALING_TESTS:
        if t.role == SCALING:
            out[t.key] = (*out.get(t.key, ()), t.attrs["sweep_dimension"])
    return out


def spec_of_class(cls: type) -> TestSpec | None:
    """The catalogue's record of a check class: its own, else its nearest base's (a
    site's subclass of ``IORWriteBandwidth`` is that test)."""
    for klass in cls.__mro__:
        if klass.__name__ in TESTS:
            return TESTS[klass.__name__]
    return None


def class_of_case(name: str) -> str:
    """The class name of a ReFrame test case's name (``IORWriteBandwidth %nodes=4``,
    ``IORReadDatasetGeneration ~local:compute+openmpi``)."""
    return name.split(" ", 1)[0] if isinstance(name, str) else ""


def placement_of(spec: TestSpec | None, entry: dict[str, Any]) -> tuple[float | None, int]:
    """(the node fraction, None: one node; the ranks per node) that ``entry`` asks of a
    test, by its benchmark's rule (``Benchmark.placement``; a test the catalogue lacks,
    or a benchmark that names none: :func:`fsaccept.core.placement.entry_placement`).
    The live check places its job by it; the sign-off holds the run to it."""
    bench = BENCHMARKS.get(spec.benchmark) if spec is not None else None
    rule = bench.placement if bench is not None and bench.placement else None
    return (rule or placement.entry_placement)(entry)


def tests_with_key(key: str) -> list[TestSpec]:
    """The tests that read reference entry ``tests.<key>`` (a test and its fixture)."""
    return [t for t in TESTS.values() if t.key == key]


def binaries() -> tuple[str, ...]:
    """Every executable the checks may run and do not build (provenance records each)."""
    return tuple(dict.fromkeys(b.binary for b in BENCHMARKS.values() if not b.built_by_check))


def spack_packages() -> tuple[str, ...]:
    """The Spack packages that build them."""
    # IO500 has none: the site builds it (IO500's prepare.sh).
    return tuple(dict.fromkeys(b.spack_package for b in BENCHMARKS.values()
                               if b.spack_package))


@cache
def schemas() -> dict[str, dict[str, Any]]:
    """Each benchmark's reference-entry schema by its ``$id`` (e.g. ``ior.schema.json``)."""
    out = {}
    for bench in BENCHMARKS.values():
        schema = json.loads(resources.files("fsaccept").joinpath(bench.schema_file).read_text())
        out[schema["$id"]] = schema
    return out


def owner_of(key: str) -> Benchmark | None:
    """The benchmark a reference key ``tests.<key>`` belongs to."""
    for bench in BENCHMARKS.values():
        for pattern in bench.reference_keys:
            if (re.search(pattern, key) if pattern.startswith("^") else pattern == key):
                return bench
    return None
