"""ReFrame base test for mdtest metadata checks (``checks/mdtest_metadata.py``).

``MdtestTest`` runs one mdtest invocation with every file phase (create, stat,
read, remove) on the node fraction of its reference entry, parses mdtest's
output (``fsaccept.benchmarks.mdtest.parse``) and reports one performance variable per rate
mdtest measured, each in ops/s and judged against its own threshold:

``file_creation``, ``file_stat``, ``file_read``, ``file_removal``,
``tree_creation``, ``tree_removal``
    mdtest's own ``SUMMARY rate`` **Mean** (the mean over ``-i`` iterations of
    the aggregate rate), exactly as printed. Max, Min and Std Dev are logged
    (``rate_statistics``), with every phase's time (``phase_times``).
``file_creation_stonewall`` (only with ``stonewall_s``)
    *Derived*, not printed by mdtest as a rate: files created until the
    stonewall / time until the stonewall (see ``fsaccept.benchmarks.mdtest.parse``).

A run that mdtest itself reports as failed (``ERROR`` lines, although it
exits 0; ``unable to ...`` warnings), that is truncated, whose judged phases
are shorter than ``min_phase_s``, or whose stat/read did not come from another
node, is INVALID with the reasons.
"""

from __future__ import annotations

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.mdtest import command, parse, validity
from fsaccept.core import guards
from fsaccept.rfm.benchmark import NO_IOR_FIX, BenchmarkTest

UNIT = "ops/s"


class MdtestTest(BenchmarkTest):
    """One mdtest run: file create, stat, read and remove rates (ops/s)."""

    unsafe_path_chars = registry.BENCHMARKS["mdtest"].unsafe_path_chars

    block_placement_needed_for = validity.BLOCK_PLACEMENT

    #: mdtest executable (from PATH: a Spack view, a module or /opt/ior/bin).
    mdtest_binary = variable(str, value="mdtest")

    #: ``True``: a directory per rank (``-u``, "easy"); ``False``: all ranks in
    #: one shared directory ("hard").
    unique_dir_per_rank = variable(bool)

    # Provenance (loggable: perflog and run report).
    variant = variable(str, value="", loggable=True)
    items_per_rank = variable(int, value=0, loggable=True)
    iterations = variable(int, value=1, loggable=True)
    stonewall_s = variable(int, value=0, loggable=True)
    write_bytes = variable(int, value=0, loggable=True)
    read_bytes = variable(int, value=0, loggable=True)
    min_phase_s = variable(float, value=parse.DEFAULT_MIN_PHASE_S, loggable=True)
    #: Tasks and nodes as mdtest printed them, and its rank shift for ``-N 1``.
    mdtest_tasks = variable(int, value=0, loggable=True)
    mdtest_nodes = variable(int, value=0, loggable=True)
    rank_shift = variable(int, value=0, loggable=True)
    #: ``figure=seconds`` per phase, from mdtest's ``SUMMARY time`` (Mean).
    phase_times = variable(str, value="", loggable=True)
    #: ``figure: max .. min .. mean .. sd ..`` per rate, as mdtest printed them.
    rate_statistics = variable(str, value="", loggable=True)
    #: How ``file_creation_stonewall`` was derived (items, time, source).
    stonewall_create = variable(str, value="", loggable=True)

    @property
    def params(self) -> command.MdtestParameters:
        """This test's typed mdtest entry of the reference file."""
        return command.parameters(self.reference_key, self.entry, self.reference_path)

    @run_after("setup")
    def require_mdtest(self):
        self.require_binary(self.mdtest_binary, NO_IOR_FIX)

    @run_after("setup")
    def set_mdtest_command(self):
        p = self.params
        self.variant = "easy" if self.unique_dir_per_rank else "hard"
        self.items_per_rank, self.iterations = p.items_per_rank, p.iterations
        self.stonewall_s = p.stonewall_s or 0
        self.write_bytes, self.read_bytes = p.write_bytes, p.read_bytes
        self.min_phase_s = float(p.min_phase_s)
        self.executable = self.mdtest_binary
        self.executable_opts = command.run_options(p, self.unique_dir_per_rank,
                                                   self.target_dir)

    def deadlines_s(self) -> int:
        """For the time limit: the stonewalled create phase, and as long again for
        each of stat, read and remove of the files it made (0 without a stonewall:
        only the reference file's margin)."""
        return 4 * int(self.entry.get("stonewall_s", 0))

    def planned_volume(self) -> int:
        return guards.planned_volume(command.planned_bytes(self.params, self.num_tasks),
                                     self.params.stonewall_s,
                                     self.refdata.max_bandwidth_mib_s)

    def figure_name(self) -> str:
        return "file_creation"

    def expectation(self) -> validity.MdtestExpectation:
        p = self.params
        return validity.MdtestExpectation(
            tasks=self.num_tasks, nodes=self.num_nodes, ranks_per_node=self.ranks_per_node,
            items_per_rank=p.items_per_rank, judged=p.thresholds, iterations=p.iterations,
            stonewall_s=p.stonewall_s, min_phase_s=p.min_phase_s)

    def mdtest_run(self) -> parse.MdtestRun:
        """mdtest's report, parsed once (with the job's stderr findings)."""
        return self.parsed_run(parse.parse_mdtest, parse.error_findings)

    def record_run(self, run: parse.MdtestRun) -> None:
        self.job_info()
        # mdtest is part of IOR and carries its version.
        self.record_version("ior", run.version)
        if run.command_line:
            self.benchmark_command = run.command_line
        self.mdtest_tasks, self.mdtest_nodes = run.tasks or 0, run.nodes or 0
        self.rank_shift = run.rank_shift or 0
        self.phase_times = ", ".join(f"{k}={v:g}s" for k, v in run.phase_times().items())
        rows = [r for r in (run.rate.rows if run.rate else []) if r.measured]
        self.rate_statistics = "; ".join(
            f"{r.figure}: max {r.printed['max']} min {r.printed['min']} "
            f"mean {r.printed['mean']} sd {r.printed['sd']}" for r in rows)
        self.stonewall_create = "; ".join(
            f"iteration {w.iteration}: {w.items} files ({w.items_source}) / {w.time_s:g} s "
            f"= {w.rate:.3f} ops/s (derived; stonewall {'hit' if w.hit else 'not hit'}, "
            f"items per rank min {w.min_items} max {w.max_items})"
            for w in run.stonewall if w.rate is not None)

    def benchmark_reasons(self) -> list[str]:
        return validity.invalid_reasons(self.mdtest_run(), self.expectation())

    @run_before("performance")
    def set_perf_variables(self):
        run = self.mdtest_run()
        figures = run.figures()
        names = [f for f in parse.FIGURES if f in figures]
        if self.stonewall_s and run.stonewall_rate() is not None:
            names.append(parse.STONEWALL_FIGURE)
        self.perf_variables = {
            name: sn.make_performance_function(self.figure, UNIT, name) for name in names}

    def figure(self, name: str) -> float:
        """mdtest's printed Mean rate of ``name`` (ops/s); the derived stonewall rate
        for ``file_creation_stonewall``."""
        value = self.mdtest_run().reported_figures().get(name)
        if value is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: mdtest printed no {name} rate")
        return value
