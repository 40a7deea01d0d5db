"""System ``local``: the Slurm cluster that ``scripts/local-cluster up``
emulates on this host (munged, slurmctld, one slurmd per node).

Never picked by host name: select it with ``--system local``.
"""

from fsaccept.core.provision import SPACK_STATE
from fsaccept.tools.cluster import OPENMPI_ENV, PARTITION, slurm_conf_path
from fsaccept.core.reference import REFERENCE_DIR


def _partition(features, benchmarks, **extras):
    """The emulated cluster's one partition; `benchmarks` says where IOR, mdtest
    and fio come from (see fsaccept/core/provision.py)."""
    return {
        'name': PARTITION,
        'descr': 'Emulated compute nodes n1..nN',
        # No accounting daemon here, so not the `slurm` backend (it calls sacct).
        'scheduler': 'squeue',
        'launcher': 'srun',
        'access': [f'--partition={PARTITION}'],
        'environs': ['openmpi'],
        # Benchmark jobs must never overlap: they would share the file system.
        'max_jobs': 1,
        'env_vars': [[k, v] for k, v in OPENMPI_ENV.items()],
        'features': features,
        'extras': {'benchmarks': benchmarks, **extras},
    }


#: ReFrame's squeue backend learns a job's nodes (and its end) from `squeue`, which
#: by default lists no job that has ended: a job quicker than one poll was then
#: recorded with no node list and as COMPLETED whatever happened.  With all states,
#: squeue keeps showing an ended job (MinJobAge) with its nodes and real end state.
_SEE_ENDED_JOBS = ['SQUEUE_STATES', 'all']


site_configuration = {
    'systems': [
        {
            'name': 'local',
            'descr': 'Slurm cluster emulated on this host (scripts/local-cluster)',
            'hostnames': [],
            'modules_system': 'nomod',
            # Loaded into ReFrame's own environment, so that sbatch/squeue talk
            # to the emulated cluster and not to any system Slurm.
            'env_vars': [['SLURM_CONF', str(slurm_conf_path())], _SEE_ENDED_JOBS],
            'partitions': [_partition(['mpi', 'emulated', 'fio'], 'path')],
        },
        {
            # The same cluster with the benchmarks built by Spack from spack-env/,
            # as a production system does: `scripts/setup --spack ...` leaves its
            # Spack (with fsaccept's own configuration scopes) in .state/spack/bin,
            # and the checks' first step runs `spack install` there (a no-op once
            # set-up has built it) and writes the activation script every job sources.
            'name': 'local-spack',
            'descr': 'Emulated cluster, benchmarks built with Spack (scripts/setup --spack)',
            'hostnames': [],
            'modules_system': 'nomod',
            'env_vars': [['SLURM_CONF', str(slurm_conf_path())], _SEE_ENDED_JOBS,
                         ['FSACCEPT_REFERENCE', str(REFERENCE_DIR / 'local.yaml')],
                         ['PATH', f'{SPACK_STATE / "bin"}:$PATH']],
            'partitions': [_partition(['mpi', 'emulated', 'fio', 'spack'], 'spack-build')],
        },
        {
            # The same cluster brought up with a real distributed file system
            # (`scripts/local-cluster up --fs gluster`): a GlusterFS volume that every
            # node mounts through a FUSE client of its own; benchmarks from Spack.
            'name': 'local-gluster',
            'descr': 'Emulated cluster on a GlusterFS volume, one client per node',
            'hostnames': [],
            'modules_system': 'nomod',
            'env_vars': [['SLURM_CONF', str(slurm_conf_path())], _SEE_ENDED_JOBS,
                         ['FSACCEPT_REFERENCE', str(REFERENCE_DIR / 'local-gluster.yaml')],
                         ['PATH', f'{SPACK_STATE / "bin"}:$PATH']],
            # Same hardware as local-spack: the same Spack environment and build.
            'partitions': [_partition(['mpi', 'emulated', 'fio', 'spack', 'gluster'],
                                      'spack-build', spack_system='local-spack')],
        },
    ],
}
