"""Pre-flight: can the partition launch an MPI job across its nodes?

Every acceptance figure rests on srun + PMIx + MPI placing ranks where we
ask.  This check runs a tiny MPI program over all idle nodes with block
distribution and verifies that every rank started, on the expected number
of distinct nodes, and that ``MPI_Allreduce`` gives the right sum.
"""

import os
import re

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher

from fsaccept.core.placement import unreported_ranks
from fsaccept.rfm.acceptance import partition_nodes, slurm_job_options
from fsaccept.rfm.accounted import Accounted
from fsaccept.rfm.jobscript import RETRY_MARKER
from fsaccept.rfm.catalogued import CataloguedTest
from fsaccept.rfm.logged import Logged


@rfm.simple_test
class MPILaunchSanity(rfm.RegressionTest, CataloguedTest, Accounted, Logged):
    valid_systems = ['+mpi']
    valid_prog_environs = ['+mpi']
    build_system = 'SingleSource'
    sourcepath = 'mpi_allreduce.c'
    #: Ranks started on each node.
    ranks_per_node = variable(int, value=2)
    time_limit = '2m'
    exclusive_access = True

    @run_after('setup')
    def use_every_usable_node(self):
        # Not ReFrame's flexible allocation: that counts idle nodes only, and
        # nodes busy with another job at set-up time are still ours to test.
        _, usable = partition_nodes(self.job)
        self.skip_if(not usable, 'no usable node in the partition')
        self.num_tasks_per_node = self.ranks_per_node
        self.num_tasks = len(usable) * self.ranks_per_node

    #: Why the launch was tried a second time ("" when it was not).
    launch_retry = variable(str, value='', loggable=True)

    @run_before('run')
    def set_layout(self):
        # A rank that dies (Open MPI's TCP BTL now and then crashes in MPI_Init on a
        # loaded host) ends the step at once, not after its peers wait out the limit.
        self.job.launcher.options = ['--distribution=block', '--kill-on-bad-exit=1']
        # A job of the run like the benchmarks': never beside one of them.
        self.job.options += slurm_job_options(self)

    @run_before('run')
    def retry_a_crashed_launch(self):
        """Launch once more when the first launch failed, as a benchmark's is: on this
        host both ranks of one emulated node now and then segfault at start-up (about
        1 launch in 12 beside a CPU and an I/O hog).  The first attempt's output goes
        to the job's stderr, and ``launch_retry`` says it happened."""
        if self.current_partition.launcher_type.registered_name != 'srun':
            return
        launch = ' '.join(['srun', *self.job.launcher.options, self.executable])
        self.job.launcher = getlauncher('local')()
        self.executable = (
            f'if {launch} > launch-1.out 2>&1; then cat launch-1.out; else '
            f'echo "{RETRY_MARKER} the first launch failed (exit $?)"; '
            f'cat launch-1.out >&2; {launch}; fi')

    @run_before('sanity')
    def note_the_retry(self):
        with open(os.path.join(self.stagedir, self.job.stdout), errors='replace') as out:
            said = re.findall(rf'^{RETRY_MARKER} (.+)$', out.read(), re.MULTILINE)
        self.launch_retry = '; '.join(said)

    @sanity_function
    def all_ranks_reported_and_sum_right(self):
        reported = {int(rank): node for rank, node in
                    sn.evaluate(sn.extractall(r'^rank (\d+) of \d+ on node (\S+)',
                                              self.stdout, (1, 2)))}
        # A node that died before Slurm noticed still gets ranks: the reason names it.
        missing = unreported_ranks(reported, self.job.num_tasks, self.job.nodelist or ())
        total = sn.extractsingle(r'^allreduce sum (\d+)', self.stdout, 1, int)
        expected = sn.extractsingle(r'expected (\d+)', self.stdout, 1, int)
        return sn.all([
            sn.assert_false(missing, msg=missing),
            sn.assert_eq(sn.len(sn.defer(set(reported.values()))),
                         self.job.num_tasks // self.ranks_per_node),
            sn.assert_eq(total, expected),
        ])
