"""``Accounted``: each Slurm job's record in the cluster's accounting, read once the job has
ended (ReFrame's ``slurm`` backend), and the job's nodes as slurmctld gave them.

slurmdbd records a job's nodes after its start: here, a job of 4 nodes read back from
``sacct`` as ``n1`` for ~0.5 s after it had COMPLETED.  ReFrame's ``slurm`` backend takes
the node list from the poll that saw the job end, so it recorded ``['n1']`` for some jobs of
4 nodes.  slurmctld's own record (``squeue``, which keeps an ended job for ``MinJobAge``)
has the nodes it allocated: they are what the job recorded, and its accounting line is
read once ``sacct`` agrees with them.
"""

from __future__ import annotations

import subprocess
import time

import reframe as rfm
from reframe.core.builtins import run_before, variable
from reframe.core.logging import getlogger

from fsaccept.core import slurm

#: How long the accounting may lag slurmctld before its line is recorded as it is.
SETTLE_S = 30


class Accounted(rfm.RegressionTestPlugin):
    """A test whose job's accounting is recorded beside its figures."""

    #: The job's record in Slurm's accounting, as sacct prints it (``JobIDRaw|State|
    #: ExitCode|ElapsedRaw|NodeList|Start``, ``fsaccept.core.slurm.SACCT_FIELDS``): its
    #: state, exit code and elapsed time beside the benchmark's figures.  "" without
    #: accounting (ReFrame's ``slurm`` backend is the one that has it).
    job_accounting = variable(str, value="", loggable=True)

    @run_before("sanity")
    def record_accounting(self):
        """Slurm's accounting of the job (nodes, state, exit code, steps) recorded for the
        sign-off."""
        jobid = str(self.job.jobid or "")
        if self.current_partition.scheduler.registered_name != "slurm" or not jobid:
            return
        nodes = _ask(["squeue", "-h", "-t", "all", "-j", jobid, "-o", "%N"]).strip()
        if nodes and getattr(self.job, "_nodespec", nodes) != nodes:
            # ReFrame's slurm job computes its node list from this, once it has ended.
            self.job._nodespec = nodes
        deadline = time.monotonic() + SETTLE_S
        while True:
            self.job_accounting = slurm.sacct_record(_ask(slurm.sacct_command(jobid)), jobid)
            if slurm.settled(self.job_accounting, nodes) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if not self.job_accounting:
            getlogger().warning(f"fsaccept: {self.display_name}: sacct has no record of "
                                f"job {jobid}")


def _ask(argv: list[str]) -> str:
    """What a Slurm command printed ("" when it failed or did not answer)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
