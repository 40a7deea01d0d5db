"""mdtest, declared once: its record and its catalogue of tests
(``checks/mdtest_metadata.py``): easy (a directory per rank) and hard (one shared
directory), each reporting mdtest's own SUMMARY rates."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from fsaccept.benchmarks.catalogue import (ACCEPTANCE, FILL_DEFAULT, FILL_OPTIONAL, Benchmark,
                                           TestSpec)
from fsaccept.benchmarks.mdtest import command, parse, validity
from fsaccept.core import joboutput, placement
from fsaccept.core.joboutput import RANK_MARKER
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


def output_reasons(stdout: str, stderr: str, spec: TestSpec,
                   entry: Mapping[str, Any] | None = None, ranks_per_node: Any = None
                   ) -> tuple[list[str], dict[str, Any]]:
    """The INVALID reasons a job's output gives a test, by the live check's rules
    (:func:`validity.invalid_reasons`, held to :func:`validity.output_expectation`: the
    nodes of the job's rank lines, the reference entry's items and phases; ranks in
    blocks, :func:`fsaccept.core.placement.block_reasons`), worded as live; it records
    nothing else from the output."""
    run = joboutput.parsed(parse.parse_mdtest, parse.error_findings, stdout, stderr)
    ranks = placement.parse_rank_map(stdout, RANK_MARKER)
    if not isinstance(ranks_per_node, int) or ranks_per_node < 1:
        return [f"ranks_per_node {str(ranks_per_node)[:40]!r} is not a count: mdtest's "
                "shift and the ranks' placement cannot be checked"], {}
    try:
        params = command.parameters(spec.key, dict(entry)) if entry is not None else None
    except (KeyError, TypeError, ValueError) as err:
        return [f"tests.{spec.key} cannot be read: {str(err)[:200]}"], {}
    nodes = len(set(ranks.values())) if ranks else (run.nodes or 0)
    return (validity.invalid_reasons(run, validity.output_expectation(
                run, nodes, ranks_per_node, params))
            + placement.block_reasons(ranks, ranks_per_node, validity.BLOCK_PLACEMENT)), {}


def contract_options(spec: TestSpec, entry: Mapping[str, Any], _ranks: int,
                     recorded: list[str]) -> list[str]:
    """The arguments the live check gives mdtest for ``spec`` from its reference
    ``entry`` (:func:`command.run_options`), its directory that of the ``recorded``
    ones."""
    return command.contract_options(command.parameters(spec.key, dict(entry)),
                                    bool(spec.attrs.get("unique_dir_per_rank")), recorded)


def output_header(stdout: str) -> tuple[int | None, int | None, list[str] | None]:
    """(tasks, nodes, the command line's words) mdtest's own header prints (``launched
    with N total task(s) on M node(s)``, ``Command line used:``)."""
    run = parse.parse_mdtest(stdout)
    if not run.command_line:
        return run.tasks, run.nodes, None
    try:
        return run.tasks, run.nodes, shlex.split(run.command_line)
    except ValueError:  # printed verbatim: it would not split
        return run.tasks, run.nodes, run.command_line.split()


BENCHMARK = Benchmark(
    name="mdtest", binary="mdtest", spack_package="ior", version_name="ior",
    figure_kinds=("metadata",), parser=parse.parse_mdtest, tests=TESTS,
    output_figures=output_figures, output_reasons=output_reasons,
    contract_options=contract_options, output_header=output_header,
    # What the entry sizes: the header mdtest prints must give them as the contract asks.
    sized_options=("-n", "-i", "-I", "-z", "-b", "-N", "-w", "-e", "-W"),
    degraded=("MdtestEasy",),  # metadata keeps working while a server is down
    scaling={"MdtestEasy": ("nodes", "ranks_per_node")},
    entry_rules=command.entry_errors,
    unsafe_path_chars={"@": "mdtest reads '@' in -d as a separator between several "
                            "directories"})
