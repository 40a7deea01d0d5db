"""md-workbench's ReFrame test: one run (precreate, benchmark iterations, cleanup) on the
node fraction the reference gives; its rate and per-operation latencies are the figures."""

from __future__ import annotations

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from fsaccept.benchmarks.md_workbench import command, parse, validity
from fsaccept.core import guards
from fsaccept.rfm.benchmark import NO_IOR_FIX, BenchmarkTest


class MdWorkbenchTest(BenchmarkTest):
    """Interleaved create/stat/read/delete of small objects: rate (ops/s) and latency
    statistics (s) of md-workbench's benchmark phase."""

    block_placement_needed_for = validity.BLOCK_PLACEMENT

    #: md-workbench executable (built with IOR: the same Spack view or PATH).
    md_workbench_binary = variable(str, value="md-workbench")

    # Provenance (loggable: perflog and run report).
    datasets = variable(int, value=0, loggable=True)
    objects_per_set = variable(int, value=0, loggable=True)
    precreate_per_set = variable(int, value=0, loggable=True)
    object_size = variable(int, value=0, loggable=True)
    iterations = variable(int, value=1, loggable=True)
    stonewall_s = variable(int, value=0, loggable=True)
    #: ``phase: rate ops/s, max time s, balance %`` for every phase line, as printed.
    phase_summary = variable(str, value="", loggable=True)

    @property
    def params(self) -> command.MdWorkbenchParameters:
        return command.parameters(self.reference_key, self.entry)

    @run_after("setup")
    def require_md_workbench(self):
        self.require_binary(self.md_workbench_binary, NO_IOR_FIX)

    @run_after("setup")
    def set_md_workbench_command(self):
        p = self.params
        self.datasets, self.objects_per_set = p.datasets, p.objects_per_set
        self.precreate_per_set, self.object_size = p.precreate_per_set, p.object_size
        self.iterations, self.stonewall_s = p.iterations, p.stonewall_s
        self.executable = self.md_workbench_binary
        self.executable_opts = command.run_options(p, self.target_dir)

    def deadlines_s(self) -> int:
        return command.deadline_s(self.params)

    def planned_volume(self) -> int:
        return guards.planned_volume(command.planned_bytes(self.params, self.num_tasks))

    def figure_name(self) -> str:
        return "rate"

    def expectation(self) -> validity.MdWorkbenchExpectation:
        p = self.params
        return validity.MdWorkbenchExpectation(
            tasks=self.num_tasks, datasets=p.datasets, precreate_per_set=p.precreate_per_set,
            objects_per_set=p.objects_per_set, iterations=p.iterations,
            stonewall_s=p.stonewall_s, judged=tuple(self.entry["thresholds"]))

    def md_workbench_run(self) -> parse.MdWorkbenchRun:
        """md-workbench's report, parsed once (with the job's stderr findings)."""
        return self.parsed_run(parse.parse_md_workbench, parse.error_findings)

    def record_run(self, run: parse.MdWorkbenchRun) -> None:
        self.job_info()
        self.record_version("ior", run.version)  # md-workbench is built with IOR
        if run.command_line:
            self.benchmark_command = run.command_line
        self.phase_summary = "; ".join(
            f"{p.name}: {p.rate_ops} ops/s, max {p.time_max_s} s, balance {p.balance_pct} %"
            for p in run.phases)

    def benchmark_reasons(self) -> list[str]:
        return validity.invalid_reasons(self.md_workbench_run(), self.expectation())

    @run_before("performance")
    def set_perf_variables(self):
        figures = self.md_workbench_run().figures()
        self.perf_variables = {
            name: sn.make_performance_function(self.figure, "ops/s" if name == "rate" else "s",
                                               name)
            for name in figures if name == "rate" or name in self.entry["thresholds"]}

    def figure(self, name: str) -> float:
        value = self.md_workbench_run().figures().get(name)
        if value is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: md-workbench printed no {name}")
        return value
