"""System ``example-lustre``: what a production site's file looks like.

A large Lustre system: login nodes ``login01..``, compute nodes behind Slurm
(with accounting, so the ``slurm`` backend), jobs launched with srun + PMIx,
benchmarks from a Spack environment.  Copy this file for your site and set
host names, partition, account and the Spack environment path.

Results where the site looks (``logging`` below): ReFrame's perflog handlers
send every figure of every test, with its provenance, as it is measured.

- ``filelog`` (ReFrame's default, kept): one perflog file per test under
  ``perflogs/<system>/<partition>/``, every loggable variable a column.
- ``httpjson``: one JSON document per test case, POSTed to ``url`` when the
  test finishes, e.g. to an Elastic index
  (``https://elastic.example.org:9200/<index>/_doc``) that the site's
  dashboards (Kibana, Grafana) read.  Each document carries every figure
  exactly as measured (``check_perf_<figure>_value``, ``_unit``, ``_ref``,
  ``_lower_thres``, ``_upper_thres``, ``_result``), the test's result, and
  every variable the check logs (``check_<name>``): exact command
  (``check_benchmark_command``), benchmark version and binary path, MPI
  version, node list and rank map, node fraction and ranks per node, deadline
  and time run, bytes moved, target and its file-system type, reference file
  and its SHA-256 (``check_reference_sha256``); ``extras`` are added to each.
  ReFrame skips the handler, with a warning, when the server does not accept
  connections at start-up, and retries a failed POST (``backoff_intervals``)
  up to ``retry_timeout`` seconds: the run goes on either way, and the
  figures stay in the perflog files and the JSON run report.

JUnit for CI dashboards: ``scripts/nightly`` writes ``junit.xml`` (ReFrame's
``--report-junit``) next to its run report: one ``testcase`` per check, with a
``failure`` element (phase and reason: ``sanity: INVALID: ...`` or
``performance: ...``) for each that did not pass.
"""

import copy

# ReFrame's own logging defaults (console, debug log file, perflog files); a
# logging entry for a system replaces them, so start from them and add to them.
from reframe.core.settings import site_configuration as _reframe_defaults

_logging = copy.deepcopy(_reframe_defaults['logging'][0])
_logging['target_systems'] = ['example-lustre']
_logging['handlers_perflog'].append({
    'type': 'httpjson',
    'url': 'https://elastic.example.org:9200/fsaccept-perflogs/_doc',
    'level': 'info',
    # Added to every document: which harness and site sent it.
    'extras': {'facility': 'fsaccept', 'site': 'example-lustre', 'data-version': '1'},
    # Elastic wants an API key; keep the key out of this file.  For example
    # 'extra_headers': {'Authorization': 'ApiKey ' + os.environ['FSACCEPT_ELASTIC_KEY']},
    'extra_headers': {},
    # Retry for up to a minute (Elastic busy or restarting), then only warn.
    'backoff_intervals': [0.5, 1, 2, 4, 8],
    'retry_timeout': 60,
})

#: Degraded-mode acceptance (``scripts/acceptance --degraded``; docs/user/degraded.md):
#: how this system is degraded and restored, run on the login node with the rights of
#: who runs the harness.  ``healed`` exits 0 once the file system has recovered.  This
#: site declares three scenarios (``DEGRADED`` below): each degraded-mode test runs once
#: per scenario.
#: Failover of the MDS pair mds01/mds02: the MDT unmounted on mds01, the HA partner
#: mounts it; failed back on restore; healed once the MDT reports its recovery COMPLETE.
LUSTRE_MDS_FAILOVER = {
    'degrade': "ssh mds01 'umount /lustre/fs1/mdt0'",
    'restore': "ssh mds02 'umount /lustre/fs1/mdt0' && ssh mds01 'mount /lustre/fs1/mdt0'",
    'healed': "! ssh mds01 \"lctl get_param -n mdt.fs1-MDT0000.recovery_status\" "
              "| grep -E '^status: (RECOVERING|INACTIVE)'",
}
#: Failover of one OSS of the oss01/oss02 pair: its OSTs unmounted on oss01, the HA
#: partner mounts them; failed back on restore; healed once every OST on oss01 reports
#: its recovery COMPLETE (``lctl``).
LUSTRE_OSS_FAILOVER = {
    'degrade': "ssh oss01 'umount -a -t lustre'",
    'restore': "ssh oss02 'umount /lustre/fs1/ost0 /lustre/fs1/ost1' && "
               "ssh oss01 'mount -a -t lustre'",
    'healed': "! ssh oss01 \"lctl get_param -n obdfilter.fs1-OST000[01].recovery_status\" "
              "| grep -E '^status: (RECOVERING|INACTIVE)'",
}
#: Rebuild of one disk group: a drive of OST0000's ZFS pool taken offline, put back
#: online on restore; healed once the pool has resilvered (no ``resilver in progress``).
LUSTRE_OST_REBUILD = {
    'degrade': "ssh oss01 'zpool offline fs1-ost0 d12'",
    'restore': "ssh oss01 'zpool online fs1-ost0 d12'",
    'healed': "ssh oss01 'zpool status fs1-ost0' | grep -q 'state: ONLINE' && "
              "! ssh oss01 'zpool status fs1-ost0' | grep -q 'resilver in progress'",
}
#: The same clause on GPFS (IBM Storage Scale): one NSD stopped, started again and the
#: file system restriped; healed once no disk is down and nothing is left ill-replicated.
#: fsaccept's GPFS probe (mmgetstate, mmlsdisk) needs root on the compute nodes; without
#: it, declare the partition's 'server_probe' (below).
GPFS_DISK_STOP = {
    'degrade': 'mmchdisk fs1 stop -d nsd012',
    'restore': 'mmchdisk fs1 start -d nsd012 && mmrestripefs fs1 -r',
    'healed': "mmlsdisk fs1 -e | grep -q 'All disks up and ready'",
}
#: GPFS, failover of an NSD server: GPFS stopped on nsd01, its disks served by their
#: backup server nsd02; started again on restore; healed once nsd01 is active and
#: every disk up and ready.
GPFS_NSD_SERVER_FAILOVER = {
    'degrade': 'mmshutdown -N nsd01',
    'restore': 'mmstartup -N nsd01',
    'healed': "mmgetstate -N nsd01 -Y | grep -q ':active:' && "
              "mmlsdisk fs1 -e | grep -q 'All disks up and ready'",
}

#: This site's scenarios, by name (``extras.degraded.scenarios``): each degraded-mode
#: test runs once per scenario (``%fault_scenario=NAME``).  One plan alone, without
#: ``scenarios``, is declared as ``'degraded': LUSTRE_OSS_FAILOVER``.
DEGRADED = {'scenarios': {'mds-failover': LUSTRE_MDS_FAILOVER,
                          'ost-failover': LUSTRE_OSS_FAILOVER,
                          'ost-rebuild': LUSTRE_OST_REBUILD}}


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
                    # Two jobs in Slurm's hands: the next one waits in the queue while
                    # one runs, and Slurm starts it once that one has ended (every job
                    # of the run is submitted with --dependency=singleton: never two
                    # at once on the file system).  Not more: a job's capacity guard
                    # counts what the jobs submitted before it may write.
                    'max_jobs': 2,
                    # What runs here: `mpi` the IOR, mdtest and md-workbench checks,
                    # `fio` the fio client checks (one fio per node).
                    'features': ['mpi', 'fio', 'spack'],
                    # Benchmarks: build spack-env/ (with spack-env/systems/
                    # example-lustre.yaml) before the first benchmark job.  For a
                    # Spack environment the admins installed, use
                    # {'benchmarks': 'spack-env', 'spack_env': '/apps/fsaccept/env'};
                    # for binaries on PATH, {'benchmarks': 'path'}; for the site's
                    # Lmod modules, 'modules': ['ior/4.0.0', 'fio/3.37'] here and
                    # {'benchmarks': 'modules'} (docs/user/site-setup.md#modules).
                    # Every job asks each node's client whether it reaches every
                    # storage server, before and after its benchmark, and degraded
                    # mode proves its fault the same way: fsaccept's own Lustre probe
                    # (lfs check servers, each target's import state).  A site's own
                    # probe takes its place: one shell line run on every node, $1 = the
                    # mount point, exit 0 when healthy, its output naming what is down
                    # (docs/user/site-setup.md), e.g.
                    #   'server_probe': '/opt/site/bin/lustre-health "$1"',
                    'extras': {'benchmarks': 'spack-build',
                               'degraded': DEGRADED},
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
    'logging': [_logging],
}
