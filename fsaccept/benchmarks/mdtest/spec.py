"""mdtest, declared once: its record and its catalogue of tests
(``checks/mdtest_metadata.py``): easy (a directory per rank) and hard (one shared
directory), each reporting mdtest's own SUMMARY rates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fsaccept.benchmarks.catalogue import (ACCEPTANCE, FILL_DEFAULT, FILL_OPTIONAL, Benchmark,
                                           TestSpec)
from fsaccept.benchmarks.mdtest import command, parse
from fsaccept.benchmarks.mdtest.validity import MIN_NODES

TESTS = (
    TestSpec(check="MdtestEasy", role=ACCEPTANCE, key="mdtest_easy", benchmark="mdtest",
             descr="mdtest file metadata rates, a directory per rank (easy)",
             tags=("metadata",), figures=parse.FIGURES, schema="mdtest.schema.json",
             attrs={"unique_dir_per_rank": True, "min_nodes": MIN_NODES}, fill=FILL_DEFAULT),
    TestSpec(check="MdtestHard", role=ACCEPTANCE, key="mdtest_hard", benchmark="mdtest",
             descr="mdtest file metadata rates, one shared directory (hard)",
             tags=("metadata",), figures=parse.FIGURES, schema="mdtest.schema.json",
             attrs={"unique_dir_per_rank": False, "min_nodes": MIN_NODES},
             fill=FILL_OPTIONAL),
)

def output_figures(stdout: str, _spec: TestSpec, _entry: Mapping[str, Any] | None = None
                   ) -> tuple[dict[str, float], frozenset[str]]:
    """The figures mdtest's output gives (its Mean rates and the create rate up to the
    stonewall, as live), and the names it answers for (every mdtest figure)."""
    return parse.parse_mdtest(stdout).reported_figures(), frozenset(parse.FIGURES)


BENCHMARK = Benchmark(
    name="mdtest", binary="mdtest", spack_package="ior", version_name="ior",
    figure_kinds=("metadata",), parser=parse.parse_mdtest, tests=TESTS,
    output_figures=output_figures,
    degraded=("MdtestEasy",),  # metadata keeps working while a server is down
    scaling={"MdtestEasy": ("nodes", "ranks_per_node")},
    entry_rules=command.entry_errors,
    unsafe_path_chars={"@": "mdtest reads '@' in -d as a separator between several "
                            "directories"})
