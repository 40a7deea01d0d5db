"""Pre-flight: can the partition launch an MPI job across its nodes?

Every acceptance figure rests on srun + PMIx + MPI placing ranks where we
ask.  This check runs a tiny MPI program over all idle nodes with block
distribution and verifies that every rank started, on the expected number
of distinct nodes, and that ``MPI_Allreduce`` gives the right sum.
"""

import reframe as rfm
import reframe.utility.sanity as sn

from fsaccept.rfm.acceptance import partition_nodes, slurm_job_options
from fsaccept.rfm.accounted import Accounted
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

    @run_before('run')
    def set_layout(self):
        # A rank that dies (Open MPI's TCP BTL now and then crashes in MPI_Init on a
        # loaded host) ends the step at once, not after its peers wait out the limit.
        self.job.launcher.options = ['--distribution=block', '--kill-on-bad-exit=1']
        # A job of the run like the benchmarks': never beside one of them.
        self.job.options += slurm_job_options(self)

    @sanity_function
    def all_ranks_reported_and_sum_right(self):
        ranks = sn.extractall(r'^rank (\d+) of \d+ on node (\S+)', self.stdout, 1, int)
        nodes = sn.extractall(r'^rank \d+ of \d+ on node (\S+)', self.stdout, 1)
        total = sn.extractsingle(r'^allreduce sum (\d+)', self.stdout, 1, int)
        expected = sn.extractsingle(r'expected (\d+)', self.stdout, 1, int)
        return sn.all([
            sn.assert_eq(sn.count(sn.defer(sorted(set(ranks)))), self.job.num_tasks),
            sn.assert_eq(sn.len(sn.defer(set(nodes))),
                         self.job.num_tasks // self.ranks_per_node),
            sn.assert_eq(total, expected),
        ])
