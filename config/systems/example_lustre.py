"""System ``example-lustre``: what a production site's file looks like.

A large Lustre system: login nodes ``login01..``, compute nodes behind Slurm
(with accounting, so the ``slurm`` backend), jobs launched with srun + PMIx,
benchmarks from a Spack environment.  Copy this file for your site and set
host names, partition, account and the Spack environment path.
"""

site_configuration = {
    'systems': [
        {
            'name': 'example-lustre',
            'descr': 'Example: large Lustre site (copy and adapt)',
            'hostnames': [r'^login\d+\.example\.org$'],
            'modules_system': 'lmod',
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'All compute nodes',
                    'scheduler': 'slurm',
                    'launcher': 'srun',
                    'access': ['--partition=compute', '--account=acceptance'],
                    'environs': ['spack'],
                    # Benchmark jobs must never overlap: they would share the file system.
                    'max_jobs': 1,
                    'features': ['mpi', 'spack'],
                    # Benchmarks: build spack-env/ (with spack-env/systems/
                    # example-lustre.yaml) before the first benchmark job.  For a
                    # Spack environment the admins installed, use
                    # {'benchmarks': 'spack-env', 'spack_env': '/apps/fsaccept/env'};
                    # for binaries on PATH, {'benchmarks': 'path'}.
                    'extras': {'benchmarks': 'spack-build'},
                },
            ],
        },
    ],
    'environments': [
        {
            # The site's MPI compilers; the benchmarks themselves come from the
            # Spack environment named in the partition's extras.
            'name': 'spack',
            'target_systems': ['example-lustre'],
            'modules': ['openmpi/4.1.6'],
            'cc': 'mpicc',
            'cxx': 'mpicxx',
            'ftn': 'mpif90',
            'features': ['mpi', 'spack'],
        },
    ],
}
