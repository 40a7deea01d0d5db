"""System ``local-gluster``: the emulated cluster brought up with a real distributed
file system (``scripts/local-cluster up --fs gluster``): a GlusterFS volume that every
node mounts through a FUSE client of its own.  Its reference file is
``reference/local-gluster.yaml`` (the volume's mount point and source pinned).

Select it with ``--system local-gluster`` (``scripts/acceptance --system local-gluster``
brings the volume up).
"""

from fsaccept.suite.provision import SPACK_STATE
from lab.emulated import emulated_system

site_configuration = {
    'systems': [
        # Same hardware as local-spack: the same Spack environment and build.
        emulated_system('local-gluster',
                        'Emulated cluster on a GlusterFS volume, one client per node',
                        benchmarks='spack-build', features=('spack', 'gluster'),
                        env_vars=(['PATH', f'{SPACK_STATE / "bin"}:$PATH'],),
                        extras={'spack_system': 'local-spack'}),
    ],
}
