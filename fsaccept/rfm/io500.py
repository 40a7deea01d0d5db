"""ReFrame base test for IO500 (``checks/io500/io500.py``, opt-in: ``-t io500``).

``Io500Test`` runs the site's own ``io500`` binary (fsaccept never builds IO500: its
sources are in no package registry; a site builds it with IO500's ``prepare.sh``) once,
through the house's launcher on the node fraction and ranks per node of the reference's
``io500:`` entry, with a config file generated from that entry
(:mod:`fsaccept.benchmarks.io500.config`): its data directory below this test's own
(created, owned and removed like every test's), its result directory kept with the
test's outputs.  The figures are IO500's own: ``total``, ``bw`` (GiB/s) and ``md``
(kIOPS) of its ``[SCORE]``, and each scored phase; the run is INVALID with IO500's own
reasons and fsaccept's (:mod:`fsaccept.benchmarks.io500.validity`): a run that died, a
stonewall other than the rules', short writes, a score the phases do not give,
reducible data on a reducing file system...
"""

from __future__ import annotations

import os
import shlex
import shutil

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from fsaccept.benchmarks.io500 import config, parse, spec, validity
from fsaccept.core import guards, joboutput, reduction
from fsaccept.rfm.benchmark import BenchmarkTest

#: The partition's ``extras`` key that names the site's io500 binary (an absolute path).
BINARY_EXTRA = "io500_binary"
#: Bytes IO500's phases write per item (its defaults, left alone by the config):
#: ior-hard's transfer and mdtest-hard's file.
IOR_HARD_TRANSFER, MDTEST_HARD_FILE = 47008, 3901
#: IO500's own size defaults (``io500 --list``), for what the entry leaves alone.
DEFAULT_EASY_BLOCK = 9920000 * 2**20
DEFAULT_HARD_SEGMENTS = 10000000
DEFAULT_MDTEST_HARD_FILES = 1000000


def no_binary_fix(where: str) -> str:
    """What a site does to give the check its binary."""
    return (f"{where}: IO500 is never built by fsaccept (its sources are in no package "
            "registry): build it with IO500's own prepare.sh (github.com/IO500/io500, a "
            "release tag such as io500-isc26_v2), then declare it in the partition's "
            f"extras in config/systems/<site>.py ('{BINARY_EXTRA}': '/path/to/io500') or "
            "put its directory on PATH")


class Io500Test(BenchmarkTest):
    """One IO500 run: its score, BW, MD and phases, judged by IO500's rules and
    fsaccept's."""

    block_placement_needed_for = "IO500's IOR phases read back data of other ranks"
    #: What its config file and the IOR it runs cannot take in the target path.
    unsafe_path_chars = spec.BENCHMARK.unsafe_path_chars

    #: The io500 executable; empty: the partition's ``extras.io500_binary``, else PATH.
    io500_binary = variable(str, value="")

    # Provenance (loggable: perflog and run report).
    io500_mode = variable(str, value="", loggable=True)
    stonewall_s = variable(int, value=0, loggable=True)
    #: The data IO500's IOR phases write, e.g. "io500 random (irreducible)".
    data_pattern = variable(str, value="", loggable=True)
    #: The config file io500 ran with, as generated.
    io500_config = variable(str, value="", loggable=True)
    #: The run as its result files say it went (``fsaccept parse io500``'s JSON, without
    #: the recomputed score): the sign-off re-reads the phases, recomputes the score and
    #: judges it again from this record.
    io500_result = variable(str, value="", loggable=True)

    @property
    def params(self) -> config.Io500Parameters:
        return config.parameters(self.entry)

    @run_after("setup")
    def require_io500(self):
        """The site's binary, declared or on PATH; else skip, saying how to get one.
        Only looked up here: IO500 itself runs in the job, never on the login node."""
        declared = self.io500_binary or self.current_partition.extras.get(BINARY_EXTRA, "")
        part = self.current_partition.fullname
        if declared:
            if not (os.path.isabs(declared) and os.path.isfile(declared)
                    and os.access(declared, os.X_OK)):
                self.skip_because(no_binary_fix(
                    f"{part}: extras.{BINARY_EXTRA} {declared!r} is not an executable file "
                    "(an absolute path, seen from the login node)"))
            self.executable = declared
        elif shutil.which("io500"):
            self.executable = "io500"
        else:
            self.skip_because(no_binary_fix(
                f"io500 not found on PATH and {part} declares no extras.{BINARY_EXTRA}"))

    @run_after("setup")
    def set_io500_command(self):
        p = self.params
        self.io500_mode = "extended" if p.extended else "standard"
        self.stonewall_s = p.stonewall_s
        self.data_pattern = reduction.pattern_label(
            "io500", p.data_pattern, validity.pattern_reducible(p.data_pattern),
            "data_pattern" in self.entry)
        self.executable_opts = config.options(p)
        # The result directory and the config go with the test's outputs.
        self.keep_files = [config.RESULT_DIR, config.CONFIG_FILE]

    def io500_datadir(self) -> str:
        return os.path.join(self.target_dir, self.params.datadir)

    @run_before("run")
    def write_config(self):
        self.io500_config = config.config_text(self.params, self.io500_datadir())
        with open(os.path.join(self.stagedir, config.CONFIG_FILE), "w") as f:
            f.write(self.io500_config)

    def prepare_data_cmds(self) -> list[str]:
        # IO500's datadir, inside the test's own directory (removed with it).
        return [f"mkdir -p -- {shlex.quote(self.io500_datadir())}"]

    def deadlines_s(self) -> int:
        return 3 * config.deadline_s(self.params) // 2

    def planned_volume(self) -> int:
        """IOR easy and hard, each bounded by its size or by the stonewall at the
        reference's bandwidth cap; mdtest-hard's files."""
        p, ranks = self.params, self.num_tasks
        cap = self.refdata.max_bandwidth_mib_s
        easy = ranks * (p.ior_easy_block_size or DEFAULT_EASY_BLOCK)
        hard = ranks * (p.ior_hard_segments or DEFAULT_HARD_SEGMENTS) * IOR_HARD_TRANSFER
        files = ranks * (p.mdtest_hard_files_per_rank or DEFAULT_MDTEST_HARD_FILES)
        return (guards.planned_volume(easy, p.stonewall_s, cap)
                + guards.planned_volume(hard, p.stonewall_s, cap)
                + files * MDTEST_HARD_FILE)

    def figure_name(self) -> str:
        return "total"

    def command_line(self) -> str:
        return super().command_line() + f"  # {config.CONFIG_FILE}: see io500_config"

    def io500_run(self) -> parse.Io500Run | None:
        """The run as its result directory (else the job's stdout) says it went; None
        when io500 left neither (the reasons say why)."""
        if not hasattr(self, "_io500_run"):
            stdout, stderr = self._stdout_text(), self._benchmark_stderr()
            status = joboutput.exit_status(self.job_info())
            where = os.path.join(self.stagedir, config.RESULT_DIR)
            run, self._read_error = parse.job_run(where, stdout, stderr, status)
            self._io500_run = run
            if run is not None:
                self.record_run(run)
        return self._io500_run

    def record_run(self, run: parse.Io500Run) -> None:
        self.benchmark_version = run.version or ""
        self.version_note = spec.version_note(run.version)
        self.io500_result = parse.record_of(run)

    def benchmark_reasons(self) -> list[str]:
        run = self.io500_run()
        if run is None:
            return [f"io500 left no result directory and printed no IO500 output "
                    f"({self._read_error})"]
        reasons = validity.invalid_reasons(
            run, reduction.SESSION_RESULTS.get(self.target_mount), procs=self.num_tasks)
        if self._read_error:
            reasons.insert(0, f"io500's result directory cannot be read ({self._read_error}): "
                              "judged from its stdout alone")
        return reasons

    @run_before("performance")
    def set_perf_variables(self):
        figures = parse.figures_of(self.io500_run())
        self.perf_variables = {
            name: sn.make_performance_function(self.figure, unit, name)
            for name, (_, unit) in figures.items()}

    def figure(self, name: str) -> float:
        value = parse.figures_of(self.io500_run()).get(name, (None, ""))[0]
        if value is None:  # sanity has already made this INVALID
            raise SanityError(f"INVALID: io500 reported no {name}")
        return value

