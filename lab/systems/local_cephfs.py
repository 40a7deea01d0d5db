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

Degraded mode (``scripts/acceptance --system local-cephfs --degraded``) has two
scenarios, each test run once per scenario (``reference/local-cephfs-degraded.yaml``'s
``degraded.scenarios`` gives each its clause):

- ``mds-failover``: the active MDS killed (``scripts/local-cluster fail-mds``), the
  standby takes its rank; the restore starts the killed MDS again, as the new standby
  (``restore``);
- ``osd-rebuild``: OSD 1 killed (``fail-osd 1``, which returns once the monitor has
  marked it down), its placement groups run degraded; the restore starts it again and
  its placement groups recover.

Both have healed when every placement group is active+clean and one MDS is active with
its standby (``healed``).
"""

import shlex

from fsaccept.core.paths import REPO_ROOT
from lab.emulated import as_a_site, ceph_conf, emulated_system

_cluster = shlex.quote(str(REPO_ROOT / "scripts" / "local-cluster"))

#: How this system is degraded and restored (fsaccept/suite/faults.py), one plan per
#: scenario: run on the login node, as an administrator would fail and restore a daemon.
DEGRADED = {
    "scenarios": {
        "mds-failover": {
            "degrade": f"{_cluster} fail-mds",
            "restore": f"{_cluster} restore",
            "healed": f"{_cluster} healed",
        },
        "osd-rebuild": {
            "degrade": f"{_cluster} fail-osd 1",
            "restore": f"{_cluster} restore",
            "healed": f"{_cluster} healed",
        },
    },
}

site_configuration = {
    'systems': [
        emulated_system('local-cephfs',
                        'Emulated cluster on a CephFS, one ceph-fuse client per node',
                        features=('spack', 'cephfs'),
                        **as_a_site(env_vars=(ceph_conf(),), extras={'degraded': DEGRADED})),
    ],
}
