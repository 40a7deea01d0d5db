"""Configuration shared by every system: programming environments that any
site can use, and general options."""

#: Systems whose scheduler answers at once and costs nothing to ask: the cluster
#: emulated on this host (squeue to a local slurmctld) and the workstation (ps).
_QUICK_TO_POLL = ['local', 'local-spack', 'workstation']

site_configuration = {
    'environments': [
        {
            # MPI compilers from PATH (the local cluster: Debian's Open MPI).
            'name': 'openmpi',
            'cc': 'mpicc',
            'cxx': 'mpicxx',
            'ftn': 'mpif90',
            'features': ['mpi'],
        },
    ],
    'general': [
        {
            # ReFrame polls its jobs 10 times a second at first, then ever more
            # slowly, down to poll_rate_min (default 0.1: every 10 s), so a job that
            # ended waited up to 10 s to be noticed: most of a local job's overhead.
            # Here a poll is one squeue to slurmctld on this host (~15 ms): keep
            # polling at least 5 times a second (bench/bench_overhead.py: median
            # overhead per job 0.82 s over a bare srun, 1.30 s at twice a second).
            # A production Slurm keeps ReFrame's defaults (one benchmark job at a
            # time polls it seldom anyway).
            'target_systems': _QUICK_TO_POLL,
            'poll_rate_min': 5,
        },
    ],
}
