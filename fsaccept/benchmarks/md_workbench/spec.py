"""md-workbench, declared once: its record and its catalogue of tests
(``checks/md_workbench.py``): IO500's interleaved small-object workload, its rate (a
floor) and each operation's latency statistics (ceilings)."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from typing import Any

from fsaccept.benchmarks.catalogue import ACCEPTANCE, FILL_OPTIONAL, Benchmark, TestSpec
from fsaccept.benchmarks.md_workbench import command, parse, validity
from fsaccept.core import joboutput, placement
from fsaccept.core.joboutput import RANK_MARKER

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


def output_reasons(stdout: str, stderr: str, _spec: TestSpec,
                   entry: Mapping[str, Any] | None = None, ranks_per_node: Any = None
                   ) -> tuple[list[str], dict[str, Any]]:
    """The INVALID reasons a job's output gives a test, by the live check's rules
    (:func:`validity.invalid_reasons`, held to what its Args line asks,
    :func:`validity.expectation_from_output`, and the reference entry's judged figures;
    its parser's findings alone without an Args line; ranks in blocks,
    :func:`fsaccept.core.placement.block_reasons`), worded as live; it records nothing
    else from the output."""
    run = joboutput.parsed(parse.parse_md_workbench, parse.error_findings, stdout, stderr)
    exp = validity.expectation_from_output(run)
    if exp is not None and entry is not None and isinstance(entry.get("thresholds"), dict):
        exp = dataclasses.replace(exp, judged=tuple(entry["thresholds"]))
    reasons = validity.invalid_reasons(run, exp) if exp is not None else list(run.reasons)
    ranks = placement.parse_rank_map(stdout, RANK_MARKER)
    if not isinstance(ranks_per_node, int) or ranks_per_node < 1:
        return reasons + ([f"ranks_per_node {str(ranks_per_node)[:40]!r} is not a count: the "
                           "ranks' placement cannot be checked"] if ranks else []), {}
    return reasons + placement.block_reasons(ranks, ranks_per_node,
                                             validity.BLOCK_PLACEMENT), {}


def contract_options(spec: TestSpec, entry: Mapping[str, Any], _ranks: int,
                     recorded: list[str]) -> list[str]:
    """The arguments the live check gives md-workbench for ``spec`` from its reference
    ``entry`` (:func:`command.run_options`), its directory that of the ``recorded``
    ones."""
    return command.contract_options(command.parameters(spec.key, dict(entry)), recorded)


def output_header(stdout: str) -> tuple[int | None, int | None, list[str] | None]:
    """(no tasks, no nodes: it prints neither; the words of its ``Args:`` line)."""
    run = parse.parse_md_workbench(stdout)
    return None, None, shlex.split(run.command_line) if run.command_line else None


BENCHMARK = Benchmark(
    # Its latencies are its own statistics, not IOR's Latency(s) column (which a known
    # IOR bug affects): its figures are metadata figures.
    name="md-workbench", binary="md-workbench", spack_package="ior", version_name="ior",
    figure_kinds=("metadata",), parser=parse.parse_md_workbench, tests=TESTS,
    output_figures=output_figures, output_reasons=output_reasons,
    contract_options=contract_options, output_header=output_header,
    # What the entry sizes: the Args line it prints must give them as the contract asks.
    sized_options=("-D", "-P", "-I", "-S", "-R", "-O", "-w"),
    # A site's variants of the test (a subclass reading md_workbench_<name>).
    extra_keys={"^md_workbench_[a-z0-9_]+$": "md-workbench.schema.json"},
    reread_rules=validity.reread_reasons)
