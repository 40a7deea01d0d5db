"""Systems ``local`` and ``local-spack``: the Slurm cluster that
``scripts/local-cluster up`` emulates on this host (munged, slurmctld, one slurmd per
node), with the benchmarks from PATH or built by Spack.

Selected by this host's name (``lab/emulated.py``): ``local-spack`` once
``scripts/setup --spack ...`` has built IOR, else ``local``; the other one with
``--system``.  Another emulated system is one more file like this one, calling
``emulated_system`` (it is then chosen with ``--system``, and polled quickly like these:
``config/settings.py``).
"""

from fsaccept.suite.provision import SPACK_STATE
from lab.emulated import emulated_system

site_configuration = {
    'systems': [
        emulated_system('local', 'Slurm cluster emulated on this host (scripts/local-cluster)',
                        benchmarks='path'),
        # The same cluster with the benchmarks built by Spack from spack-env/,
        # as a production system does: `scripts/setup --spack ...` leaves its
        # Spack (with fsaccept's own configuration scopes) in .state/spack/bin,
        # and the checks' first step runs `spack install` there (a no-op once
        # set-up has built it) and writes the activation script every job sources.
        # Its reference file is reference/local-spack.yaml, a link to local.yaml.
        emulated_system('local-spack',
                        'Emulated cluster, benchmarks built with Spack (scripts/setup --spack)',
                        benchmarks='spack-build', features=('spack',),
                        env_vars=(['PATH', f'{SPACK_STATE / "bin"}:$PATH'],)),
    ],
}
