"""The cross-node semantics check's ReFrame test: fsaccept's own program (built by the
check's fixture from ``checks/semantics/src/fsaccept_semantics.c``), one rank per node on the node
fraction the reference gives; each case's value is a figure, judged against
``max_visibility_s`` (a delay), 0 (violations: root squash and an ACL's denial among
them) or a ``min_*_rate`` floor (a namespace listing's entries/s).  Skipped where one client serves every
node (a local file system: nothing crosses nodes) or the reference promises nothing."""

from __future__ import annotations

import os

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError
from reframe.core.logging import getlogger

from fsaccept.benchmarks.semantics import command, parse, validity
from fsaccept.core import guards
from fsaccept.rfm.benchmark import BenchmarkTest


class SemanticsTest(BenchmarkTest):
    """Cross-node semantics: each case's writer and reader on different nodes."""

    block_placement_needed_for = "rank r and rank r+1 would not be on different nodes"

    # Provenance and evidence (loggable: perflog and run report).
    trials = variable(int, value=0, loggable=True)
    max_visibility_s = variable(float, value=0.0, loggable=True)
    #: The namespace cases' sizes: the flat directory's files, the tree's entries.
    namespace_files = variable(int, value=0, loggable=True)
    namespace_tree_entries = variable(int, value=0, loggable=True)
    #: The program's case lines as printed: the sign-off judges them again.
    semantics_cases = variable(str, value="", loggable=True)
    #: Each case that failed, with its node pair ("; " between them).
    semantics_failures = variable(str, value="", loggable=True)
    #: Cases the reference does not promise (``not_promised:``), with what was seen.
    not_promised = variable(str, value="", loggable=True)

    #: Figures that count violations: 0 is a measurement.
    counts = BenchmarkTest.counts | {f for f, unit in parse.FIGURES.items()
                                     if unit == parse.VIOLATIONS}

    def load_entry(self) -> None:
        """Skip, saying why, where nothing crosses nodes (a local file system: one
        client serves every node) or the reference file has no entry."""
        fstype = self.expected_fstype()
        if fstype in guards.LOCAL_FSTYPES:
            self.skip_because(f"the target is {fstype}, a local file system: one client "
                              "serves every node, so no change crosses nodes")
        if self.reference_key not in self.refdata.entries:
            self.skip_because(f"{self.refdata.path}: no tests.{self.reference_key}: the "
                              "reference promises no cross-node semantics "
                              "(docs/user/semantics.md)")
        super().load_entry()  # one rank per node: its record's placement

    @property
    def params(self) -> command.SemanticsParameters:
        return command.parameters(self.reference_key, self.entry)

    @run_after("setup")
    def need_two_nodes(self):
        if self.num_nodes < 2:
            self.skip_because(f"needs 2 nodes (a writer and a reader), the node fraction "
                              f"{self.node_fraction:g} gives {self.num_nodes}")

    @run_after("setup")
    def set_semantics_command(self):
        p = self.params
        self.trials, self.max_visibility_s = p.trials, p.max_visibility_s
        self.namespace_files = p.namespace_files
        self.namespace_tree_entries = p.namespace_tree_entries
        self.executable = os.path.join(self.program.stagedir, command.EXECUTABLE)
        self.executable_opts = command.semantics_options(
            p, os.path.join(self.target_dir, "semantics"))

    def prepare_data_cmds(self) -> list[str]:
        return ['mkdir -- "$fsaccept_data/semantics"']

    def deadlines_s(self) -> int:
        return command.deadline_s(self.params)

    def planned_volume(self) -> int:
        return guards.planned_volume(command.planned_bytes(self.params, self.num_tasks))

    def figure_name(self) -> str:
        return parse.figure_of("visibility")

    def threshold_references(self) -> dict[str, tuple]:
        return command.thresholds(self.params)

    def semantics_run(self) -> parse.SemanticsRun:
        """The program's report, parsed once (with the job's stderr findings)."""
        return self.parsed_run(parse.parse_semantics, parse.error_findings)

    def record_run(self, run: parse.SemanticsRun) -> None:
        self.job_info()
        self.record_version("semantics", run.version)
        self.semantics_cases = run.case_lines()
        p = self.params
        self.semantics_failures = "; ".join(validity.failures(run, p))
        self.not_promised = "; ".join(validity.not_promised(run, p))
        if self.semantics_failures:
            getlogger().warning(f"fsaccept: {self.display_name}: {self.semantics_failures}")

    def benchmark_reasons(self) -> list[str]:
        p = self.params
        return validity.invalid_reasons(self.semantics_run(),
                                        validity.expectation(p, self.num_tasks))

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {
            name: sn.make_performance_function(self.figure, parse.FIGURES[name], name)
            for name in self.semantics_run().figures()}

    def figure(self, name: str) -> float:
        value = self.semantics_run().figures().get(name)
        if value is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: the semantics program printed no {name}")
        return value
