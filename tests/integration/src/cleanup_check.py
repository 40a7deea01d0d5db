"""A check for the cleanup tests (tests/integration/test_cleanup.py): a "benchmark" that
writes ``files`` small files per node into its data directory and leaves them, so that
the job's EXIT trap has a large removal to do.  Everything else is BenchmarkTest's:
the data directory, owner marker, trap, time limit, sanity stage and ledger."""

import reframe as rfm
from reframe.core.builtins import run_after, variable

from fsaccept.rfm.benchmark import BenchmarkTest


@rfm.simple_test
class ManySmallFiles(BenchmarkTest):
    descr = "writes many small files per node and leaves them to the cleanup"
    tags = {"cleanup-test"}
    # Any entry gives placement and time limit: this one has every node, no deadline
    # (the time limit is then the reference's time_limit_margin_min alone).
    reference_key = "fio_metadata"
    judged = False
    files = variable(int, value=2000)
    #: Seconds the "benchmark" then waits (beyond the time limit: cut short mid-benchmark).
    sleep_s = variable(int, value=0)

    @run_after("setup")
    def set_files_command(self):
        self.executable = "bash"
        self.executable_opts = [
            "-c", 'd="$1/${SLURMD_NODENAME:-n1}"; mkdir -p -- "$d" && '
                  'for i in $(seq "$2"); do : > "$d/f.$i"; done && sleep "$3"',
            "many-small-files", self.target_dir, str(self.files), str(self.sleep_s)]

    def figure_name(self) -> str:
        return "files"

    def benchmark_reasons(self) -> list[str]:
        return []

    def set_perf_variables(self):
        self.perf_variables = {}
