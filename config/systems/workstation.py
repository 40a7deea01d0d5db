"""System ``workstation``: one machine without Slurm (a VM, a login node, a
laptop), to run the fio client checks against a directory, e.g. an NFS mount:
the "is this VM's NFS mount slow?" report.

ReFrame's local scheduler and launcher: each check runs as one local process
(one fio).  Never picked by host name: select it with ``--system workstation``::

    reframe -c checks -r --system workstation -t client    # after . .venv/bin/activate

The directory under test is ``target.path`` in ``reference/workstation.yaml``;
point the checks elsewhere without editing it with the environment variables
``FSACCEPT_TARGET=/mnt/nfs FSACCEPT_TARGET_FSTYPE=nfs4`` (or ``-S target=/mnt/nfs
-S target_fstype_expected=nfs4``): the file-system type is checked before
anything runs (``findmnt -o FSTYPE`` spelling), so a missing mount never
sends the files to the local disk.  Only checks with the ``fio`` feature run
here (IOR and mdtest need MPI and a scheduler).
"""

from fsaccept.suite.sites import quick_polling

site_configuration = {
    'systems': [
        {
            'name': 'workstation',
            'descr': 'One machine without Slurm: fio checks on a directory',
            'hostnames': [],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'default',
                    'descr': 'This machine',
                    'scheduler': 'local',
                    'launcher': 'local',
                    'environs': ['host'],
                    # Benchmarks must never overlap: they would share the file system.
                    'max_jobs': 1,
                    'features': ['fio', 'local'],
                },
            ],
        },
    ],
    'environments': [
        {
            # The host's own tools (fio from the distribution, on PATH); no MPI.
            'name': 'host',
            'target_systems': ['workstation'],
            'features': ['fio'],
        },
    ],
    # Its scheduler is ps on this machine: quick to ask.
    'general': [quick_polling(['workstation'])],
}
