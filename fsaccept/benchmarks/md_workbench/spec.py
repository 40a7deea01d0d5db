"""md-workbench, declared once: its record and its catalogue of tests
(``checks/md_workbench.py``): IO500's interleaved small-object workload, its rate (a
floor) and each operation's latency statistics (ceilings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsaccept.benchmarks.catalogue import ACCEPTANCE, FILL_OPTIONAL, Benchmark, TestSpec
from fsaccept.benchmarks.md_workbench import parse, validity

_LATENCIES = f"^({'|'.join(parse.OPERATIONS)})_latency_({'|'.join(parse.STATISTICS)})$"

TESTS = (
    TestSpec(check="MdWorkbench", role=ACCEPTANCE, key="md_workbench",
             benchmark="md-workbench", descr="md-workbench small-object rate and latency",
             tags=("metadata",), figures=("rate", _LATENCIES),
             schema="md-workbench.schema.json", fill=FILL_OPTIONAL),
)

def output_figures(stdout: str, _spec: TestSpec, _entry: Mapping[str, Any] | None = None
                   ) -> tuple[dict[str, float], frozenset[str]]:
    """The figures md-workbench's output gives (:meth:`parse.MdWorkbenchRun.figures`, as
    live), and the names it answers for (its rate and every latency statistic)."""
    return parse.parse_md_workbench(stdout).figures(), frozenset(parse.FIGURE_NAMES)


BENCHMARK = Benchmark(
    # Its latencies are its own statistics, not IOR's Latency(s) column (which a known
    # IOR bug affects): its figures are metadata figures.
    name="md-workbench", binary="md-workbench", spack_package="ior", version_name="ior",
    figure_kinds=("metadata",), parser=parse.parse_md_workbench, tests=TESTS,
    output_figures=output_figures,
    # A site's variants of the test (a subclass reading md_workbench_<name>).
    extra_keys={"^md_workbench_[a-z0-9_]+$": "md-workbench.schema.json"},
    reread_rules=validity.reread_reasons)
