"""The ReFrame systems of the Slurm cluster emulated on this host (``lab/systems/*.py``
call :func:`emulated_system`; ``config/settings.py`` loads them after the sites' systems).

The emulated cluster's default on this host follows what set-up built: ``local-spack``
once ``scripts/setup --spack ...`` has built IOR into the ``local-spack`` view
(``fsaccept.suite.sites.ior_view``), else ``local`` (benchmarks from PATH).  Only that
system claims this host's name, and only where the cluster lives (``scripts/local-cluster
up`` ran here); every other emulated system (``local-gluster``...) is chosen with
``--system``.  One more emulated system is one file in ``lab/systems/`` calling
:func:`emulated_system`.  The product marks them only by their partition feature
(``fsaccept.suite.sites.EMULATED_FEATURE``): it imports nothing from the lab.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fsaccept.suite.provision import SPACK_STATE
from fsaccept.suite.sites import (EMULATED_FEATURE, PATH_SYSTEM, SPACK_SYSTEM, built_modules,
                                  spack_built, state_dir, this_host)
from lab.accounting import ACCOUNT
from lab.cluster import OPENMPI_ENV, PARTITION, recorded_accounting, slurm_conf_path

#: Without accounting, ReFrame's squeue backend learns a job's nodes (and its end) from `squeue`, which
#: by default lists no job that has ended: a job quicker than one poll was then
#: recorded with no node list and as COMPLETED whatever happened.  With all states,
#: squeue keeps showing an ended job (MinJobAge) with its nodes and real end state.
_SEE_ENDED_JOBS = ["SQUEUE_STATES", "all"]
#: Debian's Lmod (package lmod): the jobs' shell is not a login shell, so each job
#: sources its init itself (the partition's prepare_cmds) before ReFrame's `module load`.
LMOD_INIT = "/usr/share/lmod/lmod/init/bash"
LMOD_CMD = "/usr/share/lmod/lmod/libexec/lmod"


def cluster_here(state: Path | None = None) -> bool:
    """Whether the emulated cluster lives on this host: ``scripts/local-cluster up`` has
    written its slurm.conf (kept by ``down``).  A site's login node without its own
    system file then gets the advice, not an emulated cluster that is not there."""
    return slurm_conf_path((state or state_dir()) / "cluster").is_file()


def default_emulated(state: Path | None = None) -> str:
    """The emulated system this host selects: the Spack one once IOR is built there."""
    return SPACK_SYSTEM if spack_built(state) else PATH_SYSTEM


def scheduler(state: Path | None = None) -> tuple[str, list[str]]:
    """ReFrame's backend for the emulated cluster, and its partition's access options, as
    a site has them: ``slurm`` (states from sacct) charging the cluster's account where
    ``scripts/local-cluster up`` started accounting; ``squeue`` where it ran without
    (``--accounting none``), as on a site that has no slurmdbd."""
    if recorded_accounting((state or state_dir()) / "cluster") == "none":
        return "squeue", [f"--partition={PARTITION}"]
    return "slurm", [f"--partition={PARTITION}", f"--account={ACCOUNT}"]


def hostnames(system: str, state: Path | None = None) -> list[str]:
    """``hostnames`` of an emulated system: this host's exact name for the default one
    where the cluster lives, none for the others (ReFrame picks the first that matches)."""
    if cluster_here(state) and system == default_emulated(state):
        return [f"^{re.escape(this_host())}$"]
    return []


def emulated_system(name: str, descr: str, benchmarks: str = "path",
                    features: tuple[str, ...] = (), env_vars: tuple[list[str], ...] = (),
                    state: Path | None = None,
                    extras: dict[str, Any] | None = None,
                    modules: tuple[str, ...] = (),
                    modulepath: Path | None = None) -> dict[str, Any]:
    """A ReFrame system for the Slurm cluster ``scripts/local-cluster`` emulates here:
    one partition of its nodes; ``benchmarks`` says where IOR, mdtest and fio come from
    (see fsaccept/suite/provision.py); ``features``, ``env_vars`` and ``extras`` are added.
    ``modules`` (with ``benchmarks='modules'``): the Lmod modules the partition loads in
    every job, found in ``modulepath`` (what :func:`lmod` gives)."""
    backend, access = scheduler(state)
    system = {
        "name": name,
        "descr": descr,
        "hostnames": hostnames(name, state),
        "modules_system": "nomod",
        # Loaded into ReFrame's own environment, so that sbatch/squeue talk to the
        # emulated cluster and not to any system Slurm (also when selected by host name).
        "env_vars": [["SLURM_CONF", str(slurm_conf_path((state or state_dir()) / "cluster"))],
                     _SEE_ENDED_JOBS, *env_vars],
        "partitions": [{
            "name": PARTITION,
            "descr": "Emulated compute nodes n1..nN",
            "scheduler": backend,
            "launcher": "srun",
            "access": access,
            "environs": ["openmpi"],
            # The next job waits in Slurm's queue while one runs; Slurm starts it once
            # that one has ended (--dependency=singleton: never two at once), at once
            # (the Epilog of lab/cluster.py's slurm.conf).
            "max_jobs": 2,
            "env_vars": [[k, v] for k, v in OPENMPI_ENV.items()],
            "features": ["mpi", EMULATED_FEATURE, "fio", "iperf3", *features],
            "extras": {"benchmarks": benchmarks, **(extras or {})},
        }],
    }
    if modules:
        system.update(lmod(system, modules, modulepath))
    return system


def ceph_conf() -> list[str]:
    """``CEPH_CONF`` for a system on the lab's CephFS: Ceph's server probe runs ``ceph`` on
    every node, and the lab's ``ceph.conf`` is not in ``/etc/ceph`` (in ReFrame's
    environment: sbatch passes it on to the jobs)."""
    return ["CEPH_CONF", str(state_dir() / "ceph" / "ceph.conf")]


def as_a_site(env_vars: tuple[list[str], ...] = (),
              extras: dict[str, Any] | None = None) -> dict[str, Any]:
    """The keys of :func:`emulated_system` that provide the benchmarks as a site does: from
    the Lmod modules set-up had Spack generate (``module load ior/4.0.0 fio/3.37``), until
    then the Spack build of local-spack; Spack's ``bin`` on PATH.  ``env_vars`` and
    ``extras`` are added (the lab's systems on a real file system: local-gluster...)."""
    modules, modulepath = built_modules()
    return {"benchmarks": "modules" if modulepath else "spack-build",
            "modules": tuple(modules) if modulepath else (), "modulepath": modulepath,
            "env_vars": (["PATH", f"{SPACK_STATE / 'bin'}:$PATH"], *env_vars),
            "extras": {"spack_system": SPACK_SYSTEM, **(extras or {})}}


def lmod(system: dict[str, Any], modules: tuple[str, ...],
         modulepath: Path | None) -> dict[str, Any]:
    """The keys of ``system`` that take its benchmarks from Lmod modules, as a site does
    (config/systems/example-lustre.py): Lmod, MODULEPATH and LMOD_CMD in ReFrame's
    environment (sbatch passes them on to the jobs), the partition's modules, and Lmod's
    init in each job's shell."""
    env_vars = [*system["env_vars"], ["LMOD_CMD", LMOD_CMD]]
    if modulepath is not None:
        env_vars.append(["MODULEPATH", f"{modulepath}:$MODULEPATH"])
    partition = {**system["partitions"][0], "modules": list(modules),
                 "prepare_cmds": [f". {LMOD_INIT}"]}
    return {"modules_system": "lmod", "env_vars": env_vars, "partitions": [partition]}
