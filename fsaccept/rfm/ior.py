"""IOR's ReFrame tests: one IOR phase per test (``fsaccept.benchmarks.ior.command``),
its output parsed once (``.parse``) and judged by IOR's INVALID rules (``.validity``)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shlex

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.ior import command as iorcmd
from fsaccept.benchmarks.ior import figures
from fsaccept.benchmarks.ior import parse as ior
from fsaccept.benchmarks.ior import validity
from fsaccept.core import guards, pernode, reduction
from fsaccept.core.units import MIB
from fsaccept.suite import reference
from fsaccept.rfm.benchmark import NO_IOR_FIX, PER_NODE_FIGURES, BenchmarkTest
from fsaccept.rfm.jobscript import END_WITH_STATUS, KEPT_DATASETS, RUN_ID, remove_data

#: The data pattern's seed (IOR -G) of this session: data left by another run (another
#: seed) never passes the integrity check.
PATTERN_SEED = 1 + int(hashlib.sha256(RUN_ID.encode()).hexdigest(), 16) % (2**31 - 2)


class IORTest(BenchmarkTest):
    """One IOR phase of an acceptance test."""

    unsafe_path_chars = registry.BENCHMARKS["ior"].unsafe_path_chars

    block_placement_needed_for = validity.BLOCK_PLACEMENT

    #: IOR exits with its count of incorrect transfers (``ior_main`` returns it).
    exit_status_counts = True

    #: IOR executable (from PATH: a Spack view, a module or /opt/ior/bin).
    ior_binary = variable(str, value="ior")

    #: The IOR phase, a key of ``fsaccept.benchmarks.ior.command.PHASES``.
    phase = variable(str)

    #: The figure IOR reports for this phase: ``write`` or ``read``.
    operation = variable(str)

    #: ``bandwidth`` (MiB/s) or ``iops``.
    figure_kind = variable(str, value="bandwidth")

    # Provenance (loggable).
    deadline_s = variable(int, value=0, loggable=True)
    time_run_s = variable(float, value=0.0, loggable=True)
    bytes_moved = variable(int, value=0, loggable=True)
    direct_io = variable(bool, value=False, loggable=True)
    #: A deadline-bound phase's dataset margin (``figures.dataset_margin``, which the
    #: report rebuilds from the same output): the data it had, what it moves in its
    #: deadline, and the one over the other (0: no deadline, or nothing to tell it from).
    dataset_bytes = variable(int, value=0, loggable=True)
    dataset_consumed_bytes = variable(int, value=0, loggable=True)
    dataset_margin = variable(float, value=0.0, loggable=True)
    dataset_sized_by = variable(str, value="", loggable=True)

    #: Also report the aggregate bandwidth up to the stonewall (before wear-out).
    report_stonewall_figure = variable(bool, value=False)

    #: Whether the figure is judged against a threshold (datasets are not).
    judged = True

    #: Whether a phase that ends before its deadline is INVALID.
    enforce_deadline = True

    @property
    def params(self) -> iorcmd.TestParameters:
        """This test's typed IOR entry of the reference file."""
        return iorcmd.parameters(self.refdata, self.reference_key)

    @run_after("setup")
    def require_ior(self):
        self.require_binary(self.ior_binary,
                            NO_IOR_FIX)

    #: Every node's figure until the stonewall (wear-out phases print per-rank counts),
    #: the slowest nodes, and those below ``outlier_fraction`` of the median (0: off).
    per_node_figures = variable(PER_NODE_FIGURES, value={}, loggable=True)
    slowest_nodes = variable(str, value="", loggable=True)
    outlier_fraction = variable(float, value=0.0, loggable=True)
    outlier_nodes_named = variable(str, value="", loggable=True)

    #: The API (-a), collective I/O (-c), MPI-IO hints given, and the Lustre layout of
    #: the data directory as ``lfs getstripe`` printed it in the job.
    ior_api = variable(str, value="POSIX", loggable=True)
    collective_io = variable(bool, value=False, loggable=True)
    mpiio_hints = variable(str, value="", loggable=True)
    stripe_layout = variable(str, value="", loggable=True)

    #: The data IOR wrote (-l), e.g. "ior random (irreducible)".
    data_pattern = variable(str, value="", loggable=True)

    @run_after("setup")
    def set_ior_command(self):
        pattern = self.params.data_pattern
        self.data_pattern = reduction.pattern_label(
            "ior", pattern, iorcmd.pattern_reducible(pattern), "data_pattern" in self.entry)
        self.direct_io = self.params.direct_io
        self.outlier_fraction = self.params.outlier_fraction
        self.ior_api, self.collective_io = self.params.api, self.params.collective
        # Exported by the job script itself, each value quoted once: not through ReFrame's
        # env_vars, whose values ReFrame runs $(...) and `...` in, on the login node.
        self.prerun_cmds += [f"export {k}={shlex.quote(v)}"
                             for k, v in iorcmd.hint_variables(self.params).items()]
        self.mpiio_hints = ",".join(f"{k}={v}" for k, v in (self.params.hints or {}).items())
        fstype = self.expected_fstype()
        for error in iorcmd.target_errors(f"tests.{self.reference_key}", self.entry, fstype):
            raise reference.ReferenceError(f"{self.refdata.path}: {error}")
        self.deadline_s = self.phase_deadline()
        self.executable = self.ior_binary
        self.executable_opts = self.ior_options()

    def ior_options(self) -> list[str]:
        """IOR's arguments for this test's phase, on its data directory."""
        return iorcmd.ior_options(
            self.phase, self.params, os.path.join(self.target_dir, "testfile"),
            status_file=os.path.join(self.target_dir, "stonewall.status"),
            seed=PATTERN_SEED, rank_times_file=self.rank_times_file())

    def rank_times_file(self) -> str | None:
        """Where IOR appends each rank's times (a burst's phases; None: none)."""
        return None

    def threshold_references(self) -> dict[str, tuple]:
        refs = super().threshold_references()
        # Slow clients fail the test when the reference asks (outlier_fraction > 0).
        if self.params.outlier_fraction > 0:
            refs[pernode.OUTLIER_FIGURE] = (0, None, 0, "nodes")
        return refs

    def prepare_data_cmds(self) -> list[str]:
        layout = ['echo fsaccept-info stripe_layout '
                  '$(lfs getstripe -d "$fsaccept_data" 2>&1 | tr "\\n" " ")']
        if not self.params.stripe:
            return []
        if not self.creates_data_dir:  # the dataset's layout, as its writer set it
            return layout
        return iorcmd.stripe_commands(self.params, "$fsaccept_data") + layout

    def phase_deadline(self) -> int:
        return int(self.params.deadline_s)

    def planned_volume(self) -> int:
        if iorcmd.PHASES[self.phase].access != "-w":
            return 0
        size_bound = iorcmd.planned_bytes(self.params, self.num_tasks)
        return guards.planned_volume(size_bound, self.phase_deadline() or None,
                                     self.refdata.max_bandwidth_mib_s)

    def deadlines_s(self) -> int:
        return self.phase_deadline()

    def figure_name(self) -> str:
        return figures.figure_name(self.operation, self.figure_kind)

    def expectation(self) -> validity.IorExpectation:
        """What the output asked of itself (the rules ``fsaccept parse`` applies to a
        re-read log), plus what only the live check knows: the ranks requested, the
        nodes' memory, and the deadline it set when the output does not print one."""
        own = validity.output_expectation(self.ior_run(), self.operation)
        deadline = own.deadline_s or ((self.deadline_s or None) if self.enforce_deadline
                                      else None)
        return dataclasses.replace(
            own, tasks=self.num_tasks, nodes=self.num_nodes, deadline_s=deadline,
            direct_io=self.direct_io or own.direct_io,
            node_memory_bytes=self.node_memory_bytes or None,
            min_cache_ratio=self.params.min_cache_ratio,
            generation_deadline_s=self.params.generation_deadline_s,
            figure_kind=self.figure_kind,
            separate_clients=self.separate_clients())

    def separate_clients(self) -> bool:
        """Whether each node reached the target through its own client (the job saw a
        network or distributed file system, not this host's disk)."""
        self.job_info()
        return bool(self.job_fstype) and self.job_fstype not in validity.LOCAL_FSTYPES

    def ior_run(self) -> ior.IorRun:
        """IOR's report, parsed once (with the job's stderr findings)."""
        return self.parsed_run(ior.parse_ior, ior.error_findings)

    def record_run(self, run: ior.IorRun) -> None:
        self.stripe_layout = self.job_info().get("stripe_layout", "")
        self.record_version("ior", run.version)
        if run.command_line:
            self.benchmark_command = run.command_line
        row = run.summary_for(self.operation)
        if row and row.agg_mib is not None:
            self.bytes_moved = round(row.agg_mib * MIB)
        times = [r.wrrd_s for r in run.results if r.access == self.operation and r.wrrd_s]
        self.time_run_s = min(times, default=0.0)
        keys = iorcmd.dataset_keys(self.phase) if self.enforce_deadline else ()
        margin = figures.dataset_margin(
            run, self.operation, validity.output_expectation(run, self.operation).deadline_s
            or self.deadline_s or None, keys) if keys else None
        if margin is not None:
            self.dataset_bytes, self.dataset_consumed_bytes = (margin.available_bytes,
                                                               margin.consumed_bytes)
            self.dataset_margin = round(margin.ratio, 3)
            self.dataset_sized_by = " ".join(margin.sized_by)

    def benchmark_reasons(self) -> list[str]:
        return (validity.ior_invalid_reasons(self.ior_run(), self.expectation())
                + self.reduction_reasons())

    def reduction_reasons(self) -> list[str]:
        """Reducible data on a file system this session's probe found reducing it."""
        # The catalogue says whether the figure depends on it (the integrity check's
        # count of wrong transfers does not): the sign-off reads the same record.
        if not (self.judged and (self.spec is None or self.spec.reduction_matters)):
            return []
        pattern = self.ior_run().data_pattern or self.params.data_pattern
        ranks = max(self.num_tasks, 1)
        # Written per rank: what IOR moved (a read moves what its dataset's writer wrote).
        repeats = iorcmd.random_pattern_repeats(
            pattern, max(self.bytes_moved // ranks,
                         self.params.block_size * self.params.segments
                         if not self.phase_deadline() else 0),
            ranks, self.params.transfer_size)
        return reduction.reducible_data_reasons(
            f"IOR's {pattern} pattern", iorcmd.pattern_reducible(pattern),
            reduction.SESSION_RESULTS.get(self.target_mount), repeats)

    def uses_direct_io(self) -> bool:
        return self.direct_io

    def unit(self) -> str:
        return figures.unit(self.figure_kind)

    def node_figures(self) -> dict[str, float]:
        """Each node's figure until the stonewall ({} when IOR printed no per-rank
        counts), recorded with the slowest and the outlier nodes
        (:func:`fsaccept.benchmarks.ior.figures.node_figures`, which the sign-off calls
        on the same output)."""
        if not hasattr(self, "_node_figures"):
            name = self.figure_name()
            found = figures.node_figures(self.ior_run(), self.record_rank_map(),
                                         self.operation, self.figure_kind,
                                         self.outlier_fraction)
            self._node_figures = found
            if found is not None:
                for key, value in figures.recorded_node_fields(
                        found, name, self.figure_kind).items():
                    setattr(self, key, value)
        return self._node_figures.values if self._node_figures is not None else {}

    def outlier_count(self) -> int:
        if not self.node_figures():
            raise SanityError("INVALID: outlier_fraction is set but IOR printed no per-rank "
                              "counts (-v, wear-out) to tell the nodes apart")
        return len(self._node_figures.outliers)

    def summary_row(self) -> ior.SummaryRow:
        row = self.ior_run().summary_for(self.operation)
        if row is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: no {self.operation} summary in IOR output")
        return row

    @run_before("performance")
    def set_perf_variables(self):
        if not self.judged:
            return
        self.node_figures()
        self.perf_variables = {
            self.figure_name(): sn.make_performance_function(self.figure, self.unit())}
        if self.outlier_fraction > 0:
            self.perf_variables[pernode.OUTLIER_FIGURE] = sn.make_performance_function(
                self.outlier_count, "nodes")
        if self.report_stonewall_figure:
            self.perf_variables[self.figure_name() + figures.STONEWALL_SUFFIX] = \
                sn.make_performance_function(self.stonewall_figure, "MiB/s")

    def figure(self) -> float:
        """IOR's own Mean figure over its iterations (``-i``): MiB/s or ops/s."""
        return figures.main_figure(self.summary_row(), self.figure_kind)

    def stonewall_figure(self) -> float:
        """Aggregate bandwidth up to the stonewall, before wear-out, in MiB/s
        (:func:`fsaccept.benchmarks.ior.figures.stonewall_figure`)."""
        found = figures.stonewall_figure(self.summary_row())
        if found is None:
            raise SanityError("INVALID: IOR printed no Stonewall(MiB) figure")
        return found


class IORDataset(IORTest):
    """Writes the dataset a later read test reads; used as a ReFrame fixture.

    Not judged (no threshold, no figure); its files stay until the reading
    test, which shares its node count and ranks, has run and removes them.
    """

    judged = False
    enforce_deadline = False

    def removes_data(self) -> bool:
        return False

    @run_after("setup")
    def keep_for_the_read(self):
        # From now on every test's capacity guard counts this dataset too.
        KEPT_DATASETS.keep(guards.KeptDataset(self.unique_name, self.target_dir,
                                              self.target_mount, self.planned_bytes))

    def phase_deadline(self) -> int:
        if self.phase == "read_generation":
            return int(self.params.generation_deadline_s)
        return 0


class IORReadTest(IORTest):
    """A read test over the dataset its ``dataset`` fixture wrote."""

    creates_data_dir = False
    reads_written_data = True

    @run_after("setup")
    def read_the_dataset(self):
        if (self.dataset.num_tasks, self.dataset.num_nodes) != (self.num_tasks, self.num_nodes):
            if not self.keep_data:
                left = remove_data(self.dataset.target_dir).left
                if left:
                    self.note_data_left(left)
            raise SanityError(
                f"INVALID: dataset written by {self.dataset.num_tasks} ranks on "
                f"{self.dataset.num_nodes} nodes, read planned with {self.num_tasks} ranks "
                f"on {self.num_nodes}: node availability changed in between")
        self.target_dir = self.dataset.target_dir
        self.executable_opts = self.ior_options()

    @run_after("run")
    def release_dataset(self):
        # The job has ended: its cleanup removed the dataset (or keep_data keeps it
        # for good, and then the free space counts it like any other file).
        KEPT_DATASETS.release(self.target_dir)


class IORIntegrityTest(IORReadTest):
    """Reads back, on other nodes (``-C``), the patterned data its dataset fixture wrote,
    verifying every transfer (``-R``).  Its figure counts the transfers read back wrong:
    any is a FAIL (a fast file system that returns wrong data is not accepted)."""

    counts = IORReadTest.counts | {figures.INCORRECT_TRANSFERS}
    figure_kind = "bandwidth"

    #: What IOR reported, for the report: "16 transfers read back wrong in <dir>".
    integrity_errors = variable(str, value="", loggable=True)

    def ior_run(self) -> ior.IorRun:
        # "Incorrect data" is what this test measures, not a reason to discard it.
        return validity.verified_read(super().ior_run())

    def task_failure_reasons(self, stderr: str) -> list[str]:
        if self.ior_run().data_errors:
            stderr = "\n".join(line for line in stderr.splitlines()
                                if not validity.EXIT_STATUS.search(line))
        return super().task_failure_reasons(stderr)

    def expectation(self) -> validity.IorExpectation:
        # Read back on other nodes than wrote it (-C): the readers' caches never held
        # this data, so a small dataset is right here (no cache rule).
        return dataclasses.replace(super().expectation(), node_memory_bytes=None)

    @run_after("setup")
    def set_threshold(self):
        # The integrity check's own thresholds (a site's subclass the catalogue lacks
        # applies them too).
        spec = self.spec or registry.TESTS["IORDataIntegrity"]
        self.reference = {"*": dict(spec.fixed_thresholds)}

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {figures.INCORRECT_TRANSFERS: sn.make_performance_function(
            self.incorrect_transfers, "transfers")}

    def incorrect_transfers(self) -> int:
        count = figures.incorrect_transfers(self.ior_run())
        if count:
            self.integrity_errors = (
                f"{count} transfer{'s' if count != 1 else ''} read back wrong from "
                f"{self.target_dir}/testfile.* "
                "(IOR 4.0.0 counts bad transfers; it names no file or offset)")
        return count



class IORBurst(rfm.RegressionTestPlugin):
    """A fixed volume moved once (an AI checkpoint saved or restored): the reference
    entry's ``checkpoint_size`` split among the ranks, no stonewall, and IOR's per-rank
    open-to-close times (``-O saveRankPerformanceDetailsCSV``, shown in the job's output
    after the benchmark) give its figures (``figures.burst``): the slowest rank's time,
    the volume over it, and the fastest rank's time."""

    #: The volume the ranks moved (bytes), and the slowest and fastest ranks: "rank 3 on
    #: n2: 4.21 s".
    burst_bytes = variable(int, value=0, loggable=True)
    slowest_rank = variable(str, value="", loggable=True)
    fastest_rank = variable(str, value="", loggable=True)

    @property
    def params(self) -> iorcmd.TestParameters:
        return iorcmd.run_parameters(iorcmd.parameters(self.refdata, self.reference_key),
                                     self.num_tasks)

    def rank_times_file(self) -> str | None:
        return os.path.join(self.stagedir, "ior-rank-times.csv")

    @run_before("run")
    def show_rank_times(self):
        # After the benchmark (and its retry), before the job ends with its status.
        at = self.postrun_cmds.index(END_WITH_STATUS)
        self.postrun_cmds[at:at] = [f"cat -- {shlex.quote(self.rank_times_file())}"]

    def figure_name(self) -> str:
        return self.spec.main_figure if self.spec else "checkpoint_time_s"

    def burst(self) -> figures.Burst:
        found = figures.burst(self.ior_run(), self.operation)
        if found is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: no per-rank {self.operation} times in IOR output")
        ranks = self.record_rank_map()
        self.burst_bytes = found.volume_bytes
        self.slowest_rank, self.fastest_rank = (
            figures.rank_text(r, ranks.get(r, "?"), t) for r, t in
            ((found.slowest_rank, found.seconds), (found.fastest_rank, found.first_s)))
        return found

    def benchmark_reasons(self) -> list[str]:
        return super().benchmark_reasons() + figures.burst_reasons(self.ior_run(),
                                                                   self.operation)

    @run_before("performance")
    def set_perf_variables(self):
        if self.judged:
            self.perf_variables = self.burst_perf_variables()

    def burst_perf_variables(self) -> dict:
        """Its three figures, named by its catalogue record (a checkpoint's or a
        restore's): the slowest rank's time, the volume over it, the fastest's time."""
        time, rate, first = (self.spec.figures if self.spec else
                             ("checkpoint_time_s", "checkpoint_bandwidth",
                              "first_rank_done_s"))[:3]
        return {time: sn.make_performance_function(lambda: self.burst().seconds, "s"),
                rate: sn.make_performance_function(lambda: self.burst().bandwidth_mib_s,
                                                   "MiB/s"),
                first: sn.make_performance_function(lambda: self.burst().first_s, "s")}


class IORCheckpointTest(IORBurst, IORTest):
    """Saves a checkpoint: every rank writes its shard once, fsync at close."""


class IORBurstDataset(IORBurst, IORDataset):
    """The checkpoint a restore reads, written as the checkpoint test writes it."""


class IORRestoreTest(IORBurst, IORIntegrityTest):
    """Restores a checkpoint its fixture wrote: caches dropped (the reference file's
    ``drop_caches``), each shard read on another node than wrote it (-C) and every
    transfer verified (-R); any transfer read back wrong is a FAIL, whatever the time."""

    @run_after("setup")
    def set_threshold(self):
        spec = self.spec or registry.TESTS["IORCheckpointRestore"]
        self.reference = {"*": {**self.threshold_references(), **spec.fixed_thresholds}}

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {**self.burst_perf_variables(),
                               figures.INCORRECT_TRANSFERS: sn.make_performance_function(
                                   self.incorrect_transfers, "transfers")}
