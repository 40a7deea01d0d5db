"""System ``local-gluster``: the emulated cluster brought up with a real distributed
file system (``scripts/local-cluster up --fs gluster``): a GlusterFS volume that every
node mounts through a FUSE client of its own.  Its reference file is
``reference/local-gluster.yaml`` (the volume's mount point and source pinned).

Select it with ``--system local-gluster`` (``scripts/acceptance --system local-gluster``
brings the volume up).

Benchmarks: as a site provides software, from Lmod modules (``module load ior/4.0.0
fio/3.37``) once ``scripts/setup --spack ...`` has had Spack generate them for what it
built (``.state/spack/modules``); until then the same Spack build as local-spack.

Degraded mode (``scripts/acceptance --system local-gluster --degraded``) runs on the
cluster's replicated volume (``--gluster-volume-type replica``, each brick a full copy;
``reference/local-gluster-replica.yaml``): the fault kills brick b2's daemon, the
restore restarts it (``gluster volume start ... force``), and the volume has healed
when ``gluster volume heal ... statistics heal-count`` counts no entry on any brick.
"""

import shlex

from fsaccept.core.paths import REPO_ROOT
from lab.emulated import as_a_site, emulated_system

_cluster = shlex.quote(str(REPO_ROOT / "scripts" / "local-cluster"))

#: How this system is degraded and restored (fsaccept/suite/faults.py): run on the
#: login node, as an administrator would fail and restore a storage server.
DEGRADED = {
    "degrade": f"{_cluster} fail-brick b2",
    "restore": f"{_cluster} restore-bricks",
    "healed": f"{_cluster} healed",
}

#: The lab's quota commands (the quota check, fsaccept/benchmarks/quota/command.py): run
#: on the test's node, on the directory FSACCEPT_QUOTA_DIR.  A site declares its own
#: (``lfs setquota -p``, ``mmsetquota``, ``setfattr -n ceph.quota.max_bytes``...).
QUOTA = {
    "set": f"{_cluster} quota-set",
    "clear": f"{_cluster} quota-clear",
    "usage": f"{_cluster} quota-usage",
}

site_configuration = {
    'systems': [
        # Same hardware as local-spack: the same Spack environment and build, loaded
        # as Lmod modules once set-up has generated them.
        emulated_system('local-gluster',
                        'Emulated cluster on a GlusterFS volume, one client per node',
                        features=('spack', 'gluster'),
                        **as_a_site(extras={'degraded': DEGRADED, 'quota': QUOTA})),
    ],
}
