"""The data-reduction probe as a ReFrame test (``checks/data_reduction.py``).

One task on one node of the partition runs ``python -m fsaccept.core.reduction`` in
``<target>/fsaccept`` (a directory of its own below it, removed by the probe itself),
as a benchmark job like the others (exclusive, one at a time: ``--dependency=singleton``),
so no benchmark of this system writes while it measures the free space.

How later tests read its result: the probe stores it in
``fsaccept.core.reduction.SESSION_RESULTS`` under the target's mount point, in this
ReFrame process.  ``checks/data_reduction.py`` sorts first in ``checks/``, so ReFrame
starts the probe before the benchmarks, and the singleton job name runs their jobs after
its job.  An IOR or fio figure judged when a result is known is INVALID if it was
measured with reducible data and the probe found the file system reducing data; a
figure judged without a result (no probe in the session) is not held to the rule, and
the report's data-reduction section says the probe did not run.
"""

from __future__ import annotations

import json
import shlex
import sys

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from fsaccept.core import reduction, slurm
from fsaccept.core.paths import REPO_ROOT
from fsaccept.core.units import MIB
from fsaccept.rfm.acceptance import AcceptanceTest
from fsaccept.rfm.jobscript import ABORT_MARKER


class DataReductionProbe(AcceptanceTest):
    """Writes zeros, IOR's default pattern and random data on the target and measures the
    space each took; reports the reduction ratios."""

    judged = False  # ratios are findings, not judged against thresholds
    reference_key = ""  # no entry of its own: it needs the reference file's target only
    # Wherever IOR (mpi) or fio (fio, also the one-machine workstation) writes.
    valid_systems = ["+mpi", "+fio"]
    valid_prog_environs = ["*"]

    #: Bytes per write (0: sized by the probe from the free space's noise).
    probe_volume = variable(int, value=0)

    reduction_verdict = variable(str, value="", loggable=True)
    reduction_summary = variable(str, value="", loggable=True)
    reduction_noise_bytes = variable(int, value=0, loggable=True)
    reduction_volume_bytes = variable(int, value=0, loggable=True)
    reduction_result = variable(str, value="", loggable=True)  #: the probe's JSON

    def load_entry(self) -> None:
        # The probe needs the reference file's target, no entry of its own.
        self.entry = {}
        self.node_fraction, self.ranks_per_node = 0.0, 1

    @run_after("setup")
    def place_on_node_fraction(self):
        # Overrides AcceptanceTest's: one task on one node.
        self.num_nodes, self.num_tasks, self.num_tasks_per_node = 1, 1, 1

    def planned_volume(self) -> int:
        return self.probe_volume or reduction.MIN_VOLUME

    #: The slowest write rate the probe's time limit allows for (bytes/s): a loaded
    #: GlusterFS client ran out of a limit of the margin alone (3 minutes on the lab).
    SLOWEST_RATE = 2 * MIB

    def deadlines_s(self) -> int:
        """Its own time: each pattern written ``repeats`` times at the slowest rate."""
        writes = len(reduction.PATTERNS) * 3
        return -(-writes * self.planned_volume() // self.SLOWEST_RATE)

    @run_before("run")
    def set_probe_command(self):
        where = str(self.target_root() / "fsaccept")
        self.target_dir = where
        self.env_vars["PYTHONPATH"] = str(REPO_ROOT)
        q, mount = shlex.quote(where), shlex.quote(self.target_mount)
        self.prerun_cmds += [
            f'mkdir -p -- {q} || {{ echo "{ABORT_MARKER} cannot create {where}"; exit 3; }}',
            f'[ "$(findmnt -n -o TARGET -T {q} | head -n 1)" = {mount} ] || '
            f'{{ echo "{ABORT_MARKER} {where} is not on {self.target_mount}"; exit 3; }}']
        self.executable = sys.executable
        self.executable_opts = ["-m", "fsaccept.core.reduction", where, "--max-fill-fraction",
                                str(self.refdata.max_fill_fraction)]
        if self.probe_volume:
            self.executable_opts += ["--volume", str(self.probe_volume)]

    def result(self) -> reduction.ProbeResult:
        if not hasattr(self, "_result"):
            text = open(f"{self.stagedir}/{self.stdout.evaluate()}", errors="replace").read()
            lines = text.splitlines()
            why = [line.split(" ", 1)[-1] for line in lines
                   if line.startswith((f"{reduction.RESULT_MARKER}-error ", ABORT_MARKER))]
            found = [line.split(" ", 1)[1] for line in lines
                     if line.startswith(reduction.RESULT_MARKER + " ")]
            if why or not found:
                raise SanityError("INVALID: the data-reduction probe did not measure: "
                                  + ("; ".join(why) or self._why_no_result()))
            self._result = reduction.ProbeResult.from_dict(json.loads(found[-1]))
        return self._result

    def _why_no_result(self) -> str:
        """Why the output holds no result: what Slurm says ended the job, else the last
        line the probe printed on stderr (a traceback's exception)."""
        stderr = self._stderr_text()
        said = slurm.slurm_job_failures(stderr)
        if said:
            return f"no result in its output ({'; '.join(said)})"
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        if lines:
            return f"no result in its output (its stderr ends: {lines[-1][:300]})"
        return "no result in its output, nothing on its stderr"

    @sanity_function
    def record_result(self):
        result = self.result()
        self.reduction_verdict, self.reduction_summary = result.verdict, result.summary()
        self.reduction_noise_bytes, self.reduction_volume_bytes = result.noise, result.volume
        self.reduction_result = json.dumps(result.to_dict())
        reduction.SESSION_RESULTS[self.target_mount] = result
        return True

    @run_before("performance")
    def set_perf_variables(self):
        # The noise always (an undecided probe still reports what it measured), the
        # ratios of the patterns it wrote.
        self.perf_variables = {"free_space_noise": sn.make_performance_function(
            lambda: self.result().noise / MIB, "MiB")}
        for pattern in reduction.PATTERNS:
            if pattern in self.result().measurements:
                self.perf_variables[f"{pattern.replace('-', '_')}_reduction"] = \
                    sn.make_performance_function(
                        lambda p=pattern: self.result().measurements[p].ratio, "x")
