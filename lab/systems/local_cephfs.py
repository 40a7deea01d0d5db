"""System ``local-cephfs``: the emulated cluster brought up with a second real parallel
file system (``scripts/local-cluster up --fs cephfs``): a CephFS with its own monitor,
manager, three OSDs and two MDS daemons (one active, one standby), which every node
mounts through a ``ceph-fuse`` of its own.  Its reference file is
``reference/local-cephfs.yaml`` (the mount point pinned).

Select it with ``--system local-cephfs`` (``scripts/acceptance --system local-cephfs``
brings the file system up).

The server probe (``fsaccept/core/probes/cephfs.py``) runs ``ceph`` on every node: the
lab's ``ceph.conf`` is not in ``/etc/ceph``, so ``CEPH_CONF`` names it, in ReFrame's
environment (sbatch passes it on to the jobs).

Benchmarks: the same as local-gluster's (Lmod modules once set-up has generated them,
else the Spack build of local-spack).
"""

from fsaccept.suite.provision import SPACK_STATE
from fsaccept.suite.sites import built_modules, state_dir
from lab.emulated import emulated_system

#: The benchmarks' modules and the directory for MODULEPATH (None before set-up made them).
MODULES, MODULEPATH = built_modules()

site_configuration = {
    'systems': [
        emulated_system('local-cephfs',
                        'Emulated cluster on a CephFS, one ceph-fuse client per node',
                        benchmarks='modules' if MODULEPATH else 'spack-build',
                        modules=tuple(MODULES) if MODULEPATH else (), modulepath=MODULEPATH,
                        features=('spack', 'cephfs'),
                        env_vars=(['PATH', f'{SPACK_STATE / "bin"}:$PATH'],
                                  ['CEPH_CONF', str(state_dir() / 'ceph' / 'ceph.conf')]),
                        extras={'spack_system': 'local-spack'}),
    ],
}
