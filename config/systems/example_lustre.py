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
                    'features': ['mpi'],
                },
            ],
        },
    ],
    'environments': [
        {
            # Benchmarks from the project's Spack environment (spack-env/).
            'name': 'spack',
            'target_systems': ['example-lustre'],
            'cc': 'mpicc',
            'cxx': 'mpicxx',
            'ftn': 'mpif90',
            'features': ['mpi', 'spack'],
            'prepare_cmds': ['spack env activate ${FSACCEPT_SPACK_ENV:-spack-env}'],
        },
    ],
}
