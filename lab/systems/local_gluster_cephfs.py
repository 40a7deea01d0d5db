"""System ``local-gluster-cephfs``: the emulated cluster brought up with both of its real
file systems at once (``scripts/local-cluster up --fs gluster,cephfs``).  Every node
mounts the GlusterFS volume and the CephFS, each through a client of its own.  Its
reference file is ``reference/local-gluster-cephfs.yaml``: one target per file system
(``targets:``), and this host's local disk as a third.

Select it with ``--system local-gluster-cephfs`` (``scripts/acceptance --system
local-gluster-cephfs`` brings both file systems up).  One session tests every target and
ends with one verdict, a section per target.

Each job asks the server probe of its own target's file system: GlusterFS's for the
volume, Ceph's for the CephFS (``fsaccept/core/probes``).  Ceph's needs ``CEPH_CONF``,
as on local-cephfs.

Benchmarks: the same as local-gluster's.  Degraded mode, fill and quota have their own
systems (local-gluster, local-cephfs): a reference file with ``targets:`` refuses them.
"""

from lab.emulated import as_a_site, ceph_conf, emulated_system

site_configuration = {
    'systems': [
        emulated_system('local-gluster-cephfs',
                        'Emulated cluster on a GlusterFS volume and a CephFS, one client '
                        'of each per node',
                        features=('spack', 'gluster', 'cephfs'),
                        **as_a_site(env_vars=(ceph_conf(),))),
    ],
}
