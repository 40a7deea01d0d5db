"""(About 1,200 lines: one daemon set's configuration and life cycle, standard library only.)

A real Slurm cluster emulated on one host: munged, slurmctld and one
``slurmd -N nX`` per node (Debian's Slurm is built with multiple-slurmd
support).  ``up --fs`` adds a GlusterFS volume, a CephFS, or both, each node
mounting each by a client of its own.  The configuration generation is pure and
unit-tested; the daemon handling below it is what ``scripts/local-cluster`` runs.

Only the standard library is used, so the script works before set-up has
created the virtual environment.

Why ~1,200 lines in one module: it must run with the standard library alone, before any
virtual environment exists (``python3 -m lab.cluster up``) and by file path as the
orphan reaper, so it stays self-contained.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import signal
import socket
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if not __package__:  # run by file path (the orphan reaper): find the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lab import accounting as acct  # noqa: E402
from lab import ceph as cfs  # noqa: E402
from lab import endpoints as ep  # noqa: E402
from lab import gluster as gfs  # noqa: E402
from lab import limits as lim  # noqa: E402

# Standard library only (run before any venv exists): not fsaccept.core.paths.
REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_NODES = 4
#: slurmctld's port; slurmd nX listens on DEFAULT_PORT_BASE + X.  FSACCEPT_PORT_BASE
#: moves a second checkout's cluster out of the way of the first.


def env_port_base() -> int:
    """FSACCEPT_PORT_BASE as it is now (17000 without it): a layout made without a port
    base reads it when it is made, not when this module was imported."""
    return int(os.environ.get("FSACCEPT_PORT_BASE", "17000"))


#: The port base at import (the command line's default).
DEFAULT_PORT_BASE = env_port_base()
MAX_NODES = 64
#: The highest port above the port base any part of the cluster may take: Ceph's daemons
#: (+ 301..399; the slurmds + 1..64, accounting + 100, 101, the iperf3 servers
#: + 136..199, GlusterFS's bricks + 200..299).
TOP_PORT_OFFSET = max(MAX_NODES, acct.DB_PORT, acct.DBD_PORT, gfs.BRICK_PORTS[1],
                      cfs.MON_PORT, cfs.DAEMON_PORTS[1], ep.IPERF3_PORTS[1])
PARTITION = "compute"
#: sinfo states of a node that is up and responding.
READY_STATES = frozenset({"idle", "allocated", "mixed", "completing"})
CLUSTER_NAME = "fsaccept"
#: File systems ``up --fs`` can give the nodes besides this host's own disks: one, or
#: several comma-separated (``gluster,cephfs``), each node then mounting each.  Their
#: order here is the canonical order of a set (:func:`parse_fs`).
FILE_SYSTEMS = ("none", "gluster", "cephfs")

#: Open MPI settings every MPI job on the emulated cluster needs: ranks of
#: different emulated nodes share one host, where the shared-memory BTL
#: segfaults, and TCP must stay on loopback.  PMIx's shared-memory data store
#: (gds ds21/ds12) crashed both ranks of one emulated node at start-up in 4 of 120
#: 8-rank launches here (a NULL call; their peers then cannot connect, and a
#: job could wait until its time limit); with the hash store, 0 of 180.
OPENMPI_ENV = {
    "OMPI_MCA_btl": "self,tcp",
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "PMIX_MCA_gds": "hash",
}


class ClusterError(Exception):
    """A problem the user can act on; printed as one line, no traceback."""


def parse_fs(value: str) -> tuple[str, ...]:
    """The file systems ``--fs`` names, comma-separated, in :data:`FILE_SYSTEMS`' order
    (``cephfs,gluster`` is ``gluster,cephfs``); ``none``: ().  An unknown or repeated
    name, or ``none`` with another, is refused naming it."""
    names = [n.strip() for n in value.split(",")]
    for name in names:
        if name not in FILE_SYSTEMS:
            raise ClusterError(f"--fs {name!r} is not known: one of "
                               f"{', '.join(FILE_SYSTEMS)}"
                               + (f" (in --fs {value!r})" if len(names) > 1 else ""))
    for name in names:
        if names.count(name) > 1:
            raise ClusterError(f"--fs {value!r} names {name!r} twice")
    if "none" in names and len(names) > 1:
        raise ClusterError(f"--fs {value!r}: none cannot be combined with a file system")
    return tuple(n for n in FILE_SYSTEMS if n in names and n != "none")


def canonical_fs(value: str) -> str:
    """``--fs`` as the cluster records it: ``none``, or its file systems in
    :data:`FILE_SYSTEMS`' order, comma-separated."""
    return ",".join(parse_fs(value)) or "none"


def default_state_dir() -> Path:
    """Where the cluster keeps its configuration, logs and spool (git-ignored)."""
    return Path(os.environ.get("FSACCEPT_STATE_DIR", REPO_ROOT / ".state")) / "cluster"


def slurm_conf_path(state_dir: Path | None = None) -> Path:
    return (state_dir or default_state_dir()) / "slurm.conf"


@dataclass(frozen=True)
class ClusterLayout:
    """Everything the generated ``slurm.conf`` depends on."""

    state_dir: Path
    nodes: int = DEFAULT_NODES
    port_base: int = field(default_factory=env_port_base)
    controller_host: str = "localhost"
    cpus_per_node: int = 4
    memory_mb: int = 2000
    #: "gluster": a GlusterFS volume, each node its own client (see lab/gluster.py);
    #: "cephfs": a CephFS, each node its own ceph-fuse (see lab/ceph.py);
    #: "gluster,cephfs": both, each node a client of each.  Kept canonical
    #: (:func:`canonical_fs`); :attr:`file_systems` is the set.
    fs: str = "none"
    gluster_volume_type: str = "distribute"
    gluster_brick_size: str = ""
    #: "slurmdbd": accounting with MariaDB (lab/accounting.py); "none": without, as a
    #: site that has none (its ReFrame systems use the squeue backend).
    accounting: str = "slurmdbd"

    def __post_init__(self) -> None:
        if self.accounting not in acct.MODES:
            raise ClusterError(f"--accounting {self.accounting!r} is not known: one of "
                               f"{', '.join(acct.MODES)}")
        object.__setattr__(self, "fs", canonical_fs(self.fs))
        if not 1 <= self.nodes <= MAX_NODES:
            raise ClusterError(
                f"--nodes must be between 1 and {MAX_NODES}, got {self.nodes}")
        if not 1024 <= self.port_base <= 65535 - TOP_PORT_OFFSET:
            raise ClusterError(
                f"--port-base must be between 1024 and {65535 - TOP_PORT_OFFSET}, "
                f"got {self.port_base}")
        ranges = sorted(self.port_ranges.items(), key=lambda item: item[1])
        for (one, (_, last)), (other, (first, _)) in zip(ranges, ranges[1:]):
            if first <= last:
                raise ClusterError(f"--port-base {self.port_base}: the ports of {one} and "
                                   f"{other} overlap ({first}-{last})")
        if "gluster" in self.file_systems and gfs.GLUSTERD_PORT in self.ports:
            # glusterd listens on its own address, the Slurm daemons on every address.
            raise ClusterError(f"--port-base {self.port_base}: port {gfs.GLUSTERD_PORT} would "
                               f"be {self.ports[gfs.GLUSTERD_PORT]}'s, and it is glusterd's "
                               "on every port base: choose another port base")

    @property
    def file_systems(self) -> tuple[str, ...]:
        """The file systems each node mounts (none: ()), in :data:`FILE_SYSTEMS`' order."""
        return parse_fs(self.fs)

    @property
    def node_names(self) -> list[str]:
        return [f"n{i}" for i in range(1, self.nodes + 1)]

    @property
    def controller_port(self) -> int:
        return self.port_base

    def node_port(self, index: int) -> int:
        """Port of the slurmd of node ``n<index>`` (1-based)."""
        return self.port_base + index

    @property
    def ports(self) -> dict[int, str]:
        """Every port the cluster listens on, with the daemon that owns it."""
        owners = {self.controller_port: "slurmctld"}
        for i, name in enumerate(self.node_names, start=1):
            owners[self.node_port(i)] = f"slurmd {name}"
        if self.accounting_layout:
            owners.update(self.accounting_layout.ports)
        return owners

    @property
    def port_ranges(self) -> dict[str, tuple[int, int]]:
        """Every port range the cluster's daemons listen on (first, last), by owner:
        Slurm's and the accounting's (:attr:`ports`, which ``up`` finds free first), and
        those of each of its file systems (each checks its own).  All follow the port
        base, none overlaps another (refused); glusterd's own port does not move."""
        ranges = {"slurmctld": (self.controller_port,) * 2,
                  "slurmd": (self.node_port(1), self.node_port(self.nodes))}
        if self.accounting_layout:
            ranges.update({owner: (port, port)
                           for port, owner in self.accounting_layout.ports.items()})
        if "gluster" in self.file_systems:
            ranges["GlusterFS bricks"] = gluster_layout(self).brick_ports
            ranges["iperf3 servers"] = endpoints(self).port_range
        if "cephfs" in self.file_systems:
            ceph = ceph_layout(self)
            ranges["ceph-mon"] = (ceph.mon_port,) * 2
            ranges["Ceph daemons"] = ceph.daemon_ports
        return ranges

    @property
    def accounting_layout(self) -> acct.AccountingLayout | None:
        """Where the cluster's slurmdbd and MariaDB keep their files (None: no accounting)."""
        if self.accounting == "none":
            return None
        return acct.AccountingLayout(self.state_dir.parent / "accounting", self.state_dir,
                                     self.port_base, CLUSTER_NAME)


def render_slurm_conf(layout: ClusterLayout, first_job_id: int = 1) -> str:
    """The ``slurm.conf`` of the emulated cluster.

    Per-node spool and TmpFS (``%n``) matter: without a per-node TmpFS every
    slurmstepd on the host creates the same ``spmix_appdir`` and PMIx steps
    fail.  ``config_overrides`` lets slurmd accept CPU/memory figures that
    differ from the host's.  ``first_job_id``: past the last job the accounting
    database holds (``slurmctld -c`` starts the ids again).
    """
    s = layout.state_dir
    last = layout.nodes
    node_range = "n1" if last == 1 else f"n[1-{last}]"
    port_range = (str(layout.node_port(1)) if last == 1
                  else f"[{layout.node_port(1)}-{layout.node_port(last)}]")
    lines = [
        "# Generated by scripts/local-cluster; edits are overwritten.",
        f"ClusterName={CLUSTER_NAME}",
        f"SlurmctldHost={layout.controller_host}(127.0.0.1)",
        f"SlurmctldPort={layout.controller_port}",
        "SlurmUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        "MpiDefault=pmix",
        "ProctrackType=proctrack/pgid",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SchedulerType=sched/backfill",
        # Schedule a batch job when it is submitted: by default Slurm may wait up to
        # 3 s (batch_sched_delay) after its last scheduling pass, which is exactly
        # when a harness that runs one job at a time submits the next one.
        "SchedulerParameters=batch_sched_delay=0",
        # Slurm 22.05 starts a pending batch job on its background pass, once a second,
        # but at once when a node reports a job's epilog done, which slurmd does only
        # when there is an epilog to run.  With one, the job ReFrame submitted while
        # another ran (singleton) starts ~30 ms after that one ends, not ~0.6 s.
        "Epilog=/bin/true",
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        *acct.slurm_conf_lines(layout.accounting_layout, first_job_id),
        "JobCompType=jobcomp/none",
        "MailProg=/bin/true",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        "InactiveLimit=0",
        "KillWait=5",
        # All nodes share one disk: under heavy I/O a job's removal of its data can sit
        # in an uninterruptible unlink for minutes after the time limit's SIGKILL.  At
        # Slurm's 60 s default the node was drained ("Kill task failed") and every
        # later test lacked it; the job ends once the unlink returns.
        "UnkillableStepTimeout=600",
        "MinJobAge=300",
        f"StateSaveLocation={s}/ctld",
        f"SlurmctldPidFile={s}/slurmctld.pid",
        f"SlurmctldLogFile={s}/log/slurmctld.log",
        f"SlurmdSpoolDir={s}/spool/%n",
        f"SlurmdPidFile={s}/slurmd-%n.pid",
        f"SlurmdLogFile={s}/log/slurmd-%n.log",
        f"TmpFS={s}/tmp/%n",
        f"NodeName={node_range} NodeHostname=localhost NodeAddr=127.0.0.1 "
        f"Port={port_range} CPUs={layout.cpus_per_node} "
        f"RealMemory={layout.memory_mb} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={node_range} Default=YES "
        "MaxTime=INFINITE State=UP OverSubscribe=NO",
    ]
    return "\n".join(lines) + "\n"


def node_count_in_conf(conf_text: str) -> int | None:
    """The node count a generated ``slurm.conf`` declares, or None."""
    for line in conf_text.splitlines():
        if line.startswith("NodeName="):
            spec = line.split()[0].removeprefix("NodeName=")
            if spec == "n1":
                return 1
            if spec.startswith("n[1-") and spec.endswith("]"):
                return int(spec[4:-1])
    return None


def directories(layout: ClusterLayout) -> list[Path]:
    """Every directory the daemons expect to exist before they start."""
    s = layout.state_dir
    dirs = [s, s / "ctld", s / "log", s / "spool", s / "tmp"]
    for name in layout.node_names:
        dirs += [s / "spool" / name, s / "tmp" / name]
    return dirs


def parse_sinfo_states(text: str) -> dict[str, str]:
    """Map node name → state from ``sinfo -h -N -o '%N %T'`` output."""
    states = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states[parts[0]] = parts[1].lower()
    return states


# --------------------------------------------------------------------------
# Daemon handling (not pure: runs munged, slurmctld, slurmd)
# --------------------------------------------------------------------------

def endpoints(layout: ClusterLayout) -> ep.Endpoints:
    """The lab's iperf3 servers (lab/endpoints.py): on the GlusterFS servers' address,
    one per node."""
    return ep.Endpoints(layout.state_dir, layout.port_base, gluster_layout(layout).address,
                        layout.nodes)


def gluster_layout(layout: ClusterLayout) -> gfs.GlusterLayout:
    return gfs.GlusterLayout.for_port_base(layout.state_dir.parent / "gluster",
                                           layout.port_base,
                                           volume_type=layout.gluster_volume_type,
                                           brick_size=layout.gluster_brick_size)


#: Each OSD's sparse file under ``up --fs cephfs`` (only what is written takes room): 3 of
#: 8 GiB hold ~7 GiB of data (3 copies), and the capacity guard lets a run plan half of
#: what is free.  With 2 GiB, the main job's write and read tests could not plan data
#: that lasts their deadline at this lab's ~150-350 MiB/s.
CEPH_OSD_SIZE = "8G"


def ceph_layout(layout: ClusterLayout) -> cfs.CephLayout:
    """The lab's CephFS of a cluster: under ``.state/ceph``, its ports and mount point
    following the cluster's port base (as :func:`gluster_layout`'s do)."""
    return cfs.CephLayout.for_port_base(layout.state_dir.parent / "ceph", layout.port_base,
                                        osd_size=CEPH_OSD_SIZE)


def recorded_volume_type(state_dir: Path) -> str:
    """The GlusterFS volume type the running cluster was brought up with."""
    try:
        return (state_dir / "gluster-volume-type").read_text().strip() or "distribute"
    except OSError:
        return "distribute"


def recorded_brick_size(state_dir: Path) -> str:
    """The brick size the running cluster's volume has ("": directories)."""
    try:
        return (state_dir / "gluster-brick-size").read_text().strip()
    except OSError:
        return ""


def recorded_accounting(state_dir: Path) -> str:
    """The accounting the running cluster was brought up with ("slurmdbd" if unknown)."""
    try:
        return (state_dir / "accounting").read_text().strip() or "slurmdbd"
    except OSError:
        return "slurmdbd"


def recorded_fs(state_dir: Path) -> str:
    """The file systems the running cluster was brought up with, as :func:`record_fs`
    wrote them ("none" if none)."""
    try:
        said = (state_dir / "fs").read_text().strip() or "none"
    except OSError:
        return "none"
    try:
        return canonical_fs(said)
    except ClusterError:
        return said  # as it is: ClusterLayout refuses it, naming it


def record_fs(state_dir: Path, fs: str) -> None:
    """Record the file systems ``up`` brought up (canonical: ``gluster,cephfs``)."""
    (state_dir / "fs").write_text(canonical_fs(fs) + "\n")


class LocalCluster:
    def __init__(self, layout: ClusterLayout) -> None:
        self.layout = layout
        self.conf = slurm_conf_path(layout.state_dir)
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.gluster = gfs.Gluster(gluster_layout(layout))
        self.ceph = cfs.Ceph(ceph_layout(layout))
        self.limits = lim.Limits(layout.state_dir, layout.port_base)
        self.endpoints = endpoints(layout)
        # Always known, so that `down` stops what an `up` with accounting started.
        self.accounting = acct.Accounting(
            layout.accounting_layout or acct.AccountingLayout(
                layout.state_dir.parent / "accounting", layout.state_dir, layout.port_base,
                CLUSTER_NAME), self.env)

    # -- pid files ---------------------------------------------------------
    def _pidfiles(self) -> dict[str, Path]:
        s = self.layout.state_dir
        files = {"slurmctld": s / "slurmctld.pid"}
        for f in sorted(s.glob("slurmd-*.pid")):
            files["slurmd " + f.stem.removeprefix("slurmd-")] = f
        return files

    @staticmethod
    def _live_pid(pidfile: Path, expected: str) -> int | None:
        """The pid in ``pidfile`` if that process is alive and is ``expected``
        (guards against a recycled pid: we never stop daemons by name)."""
        try:
            pid = int(pidfile.read_text().split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            return None
        argv0 = cmdline.split(b"\0")[0].decode(errors="replace")
        return pid if os.path.basename(argv0) == expected else None

    def running_daemons(self) -> dict[str, int]:
        live = {}
        for name, f in self._pidfiles().items():
            pid = self._live_pid(f, name.split()[0])
            if pid:
                live[name] = pid
        return live

    def running_node_count(self) -> int | None:
        if not self.conf.exists():
            return None
        return node_count_in_conf(self.conf.read_text())

    # -- helpers -----------------------------------------------------------
    def _run(self, argv: list[str], check: bool = True, timeout: float = 30
             ) -> subprocess.CompletedProcess:
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True,
                              timeout=timeout)
        if check and proc.returncode != 0:
            raise ClusterError(f"{' '.join(argv)} failed (exit {proc.returncode}): "
                               f"{(proc.stderr or proc.stdout).strip()}")
        return proc

    def _log_tails(self, lines: int = 15) -> str:
        out = []
        for log in sorted((self.layout.state_dir / "log").glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log} (last {len(tail)} lines)\n" + "\n".join(tail))
        return "\n".join(out)

    def node_states(self) -> dict[str, str]:
        proc = self._run(["sinfo", "-h", "-N", "-o", "%N %T"], check=False, timeout=15)
        return parse_sinfo_states(proc.stdout) if proc.returncode == 0 else {}

    # -- munge -------------------------------------------------------------
    def _munge_works(self) -> bool:
        try:
            cred = subprocess.run(["munge", "-n"], capture_output=True, timeout=5)
            if cred.returncode != 0:
                return False
            check = subprocess.run(["unmunge"], input=cred.stdout,
                                   capture_output=True, timeout=5)
            return check.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    #: How long a munged that is running (its pid file names a live munged) is given to
    #: answer before ``up`` gives up: a loaded host, or many clusters' daemons asking at
    #: once, made one ``munge -n`` fail while munged ran, and a second munged then
    #: failed on the first's lock.
    MUNGE_ANSWER_S = 60

    def _munge_answers(self, timeout: float) -> bool:
        """Whether ``munge -n | unmunge`` works within ``timeout`` seconds, asked again
        each second."""
        deadline = time.monotonic() + timeout
        while True:
            if self._munge_works():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(1)

    #: A munged an ``up`` started, left running by its cluster's ``down`` for the Slurm
    #: daemons of other clusters: the ``down`` that finds none left stops it.  A munged
    #: the host runs of its own is never named here, so never stopped.
    MUNGED_HANDOVER = Path("/run/munge/fsaccept-munged.pid")

    def ensure_munge(self) -> None:
        if self._munge_works():
            return
        running = self._live_pid(Path("/run/munge/munged.pid"), "munged")
        if running:  # one munged serves the host: wait for it, never start a second
            if self._munge_answers(self.MUNGE_ANSWER_S):
                return
            raise ClusterError(f"munged (pid {running}) runs but `munge -n | unmunge` failed "
                               f"for {self.MUNGE_ANSWER_S} s; see /var/log/munge/munged.log")
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            raise ClusterError(f"munge key {key} is missing: run scripts/setup")
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        pidfile = self.layout.state_dir / "munged.pid"
        self._run(["runuser", "-u", "munge", "--", "munged"])
        for _ in range(50):
            if self._munge_works():
                # Remember that we started it, so that `down` stops it again.
                pid = Path("/run/munge/munged.pid").read_text().strip()
                pidfile.write_text(pid + "\n")
                return
            time.sleep(0.1)
        raise ClusterError("munged started but `munge -n | unmunge` still fails; "
                           "see /var/log/munge/munged.log")

    # -- commands ----------------------------------------------------------
    def check_tools(self) -> None:
        for tool, package in [("munged", "munge"), ("slurmctld", "slurmctld"),
                              ("slurmd", "slurmd"), ("sinfo", "slurm-client")]:
            if shutil.which(tool) is None:
                raise ClusterError(f"{tool} not found (Debian package {package}): "
                                   "run scripts/setup")

    def check_ports_free(self) -> None:
        for port, owner in self.layout.ports.items():
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    sock.bind(("0.0.0.0", port))
                except OSError:
                    raise ClusterError(
                        f"port {port} (for {owner}) is already in use; choose "
                        f"another range with --port-base") from None

    def up(self, timeout: float = 90) -> str:
        live = self.running_daemons()
        running_nodes = self.running_node_count()
        file_systems = self.layout.file_systems
        same_fs = recorded_fs(self.layout.state_dir) == self.layout.fs and (
            "gluster" not in file_systems
            or (recorded_volume_type(self.layout.state_dir),
                recorded_brick_size(self.layout.state_dir))
            == (self.layout.gluster_volume_type, self.layout.gluster_brick_size)) and (
            recorded_accounting(self.layout.state_dir) == self.layout.accounting)
        if "slurmctld" in live and running_nodes == self.layout.nodes and same_fs:
            missing = [n for n in self.layout.node_names if f"slurmd {n}" not in live]
            if self.layout.accounting_layout and len(self.accounting.running()) < 2:
                self.accounting.up(_user())  # revives a killed slurmdbd or MariaDB
            if "gluster" in file_systems:
                self.gluster.up()  # revives a killed brick daemon or login client
                self._endpoints_up()
                # A node whose client died (or that was started without it) is
                # restarted with a new one; all of them if the login node's client was
                # mounted again (its mount reached their namespaces, over their own).
                for name in self.layout.node_names:
                    if name not in missing and (self.gluster.remounted
                                                or not self.gluster.client_pid(name)):
                        self.stop_slurmd(name)
                        missing.append(name)
            if "cephfs" in file_systems:
                _, remounted = self.ceph_up()  # revives a killed daemon or login client
                for name in self.layout.node_names:
                    if name not in missing and (remounted or not self.ceph.client_pid(name)):
                        self.stop_slurmd(name)
                        missing.append(name)
            if not missing:
                self.wait_ready(timeout)
                return (f"local cluster already running with {self.layout.nodes} nodes "
                        "(no change)")
            # A node's daemon died (or was killed by a fault test): restart just that
            # daemon; jobs on the other nodes go on.
            for name in missing:
                self.start_slurmd(name)
            self.wait_ready(timeout)
            return f"local cluster: restarted slurmd of {', '.join(missing)}"
        self.check_tools()
        notes = []
        if live:
            state = self.layout.state_dir
            had = self.fs_name(recorded_fs(state), recorded_volume_type(state),
                               recorded_brick_size(state))
            wanted = self.fs_name(self.layout.fs, self.layout.gluster_volume_type,
                                  self.layout.gluster_brick_size)
            notes.append(f"restarting: cluster had {running_nodes} nodes, "
                         f"{self.layout.nodes} requested" if had == wanted else
                         f"restarting: cluster had {running_nodes} nodes and file system "
                         f"{had}, {self.layout.nodes} and {wanted} requested")
            self.down()
        self.check_ports_free()
        for d in directories(self.layout):
            d.mkdir(parents=True, exist_ok=True)
        for old in self.layout.state_dir.glob("slurmd-*.pid"):
            old.unlink()
        self.conf.write_text(render_slurm_conf(self.layout))
        self.ensure_munge()
        if self.layout.accounting_layout:
            try:
                notes.append(self.accounting.up(_user()))
                first = self.accounting.last_job_id() + 1
            except acct.AccountingError as err:
                self.accounting.down()  # nothing half-started stays running
                raise ClusterError(str(err)) from None
            self.conf.write_text(render_slurm_conf(self.layout, first))
        if "gluster" in file_systems:
            try:
                notes.append(self.gluster.up())
                if (started := self._endpoints_up()):
                    notes.append(started)
            except (gfs.GlusterError, ClusterError) as err:
                self.down()  # nothing half-started stays running: accounting, munged too
                raise ClusterError(str(err)) from None
        if "cephfs" in file_systems:
            try:
                notes.append(self.ceph_up()[0])
            except ClusterError:
                if "gluster" in file_systems:
                    self.endpoints.down()
                    self.gluster.down()  # brought up for this cluster, which failed
                raise
        record_fs(self.layout.state_dir, self.layout.fs)
        (self.layout.state_dir / "accounting").write_text(self.layout.accounting + "\n")
        (self.layout.state_dir / "gluster-volume-type").write_text(
            self.layout.gluster_volume_type + "\n")
        (self.layout.state_dir / "gluster-brick-size").write_text(
            self.layout.gluster_brick_size + "\n")
        # -c: start from clean job state; the cluster is ephemeral.
        self._run(["slurmctld", "-c"])
        for name in self.layout.node_names:
            self.start_slurmd(name)
        self.wait_ready(timeout)
        notes.append(f"local cluster up: {self.layout.nodes} idle nodes "
                     f"(SLURM_CONF={self.conf})")
        return "\n".join(notes)

    def _endpoints_up(self) -> str:
        try:
            return self.endpoints.up()
        except (ep.EndpointError, OSError, subprocess.SubprocessError) as err:
            raise ClusterError(f"iperf3 servers: {err}") from None

    def ceph_up(self) -> tuple[str, bool]:
        """Bring the CephFS up (or revive what of it is not running) and mount the login
        node's client: what was done, and whether the login node's client was mounted
        anew (it then reached the nodes' namespaces, over their own: restart them).
        On an error, what was started is stopped again (unless the cluster runs)."""
        try:
            said = self.ceph.up()
            remounted = not self.ceph.client_pid("login")
            if remounted:
                self.ceph.unmount("login")  # a dead client's mount, if any
                self.ceph.mount(node="login")
        except cfs.CephError as err:
            if "slurmctld" not in self.running_daemons():
                self.ceph.down()  # nothing half-created stays running
            raise ClusterError(str(err)) from None
        if remounted:
            said += f"; login node's client mounted at {self.ceph.layout.mount_point}"
        return said, remounted

    @staticmethod
    def fs_name(fs: str, volume_type: str, brick_size: str) -> str:
        """``fs`` as a restart names it: GlusterFS's with its volume type and bricks."""
        return " and ".join(
            f"{name} ({volume_type}{f', {brick_size} bricks' if brick_size else ''})"
            if name == "gluster" else name for name in fs.split(","))

    def start_slurmd(self, name: str, mount: bool = True,
                     options: tuple[str, ...] | None = None) -> None:
        """Start ``slurmd -N name`` in the foreground under :func:`reap_orphans`.

        Every ``srun`` leaves a child (its shepherd) that is orphaned when srun
        ends; the kernel hands orphans to the nearest "subreaper", else to PID 1.
        Until the orphan is reaped it stays in the batch script's process group,
        and slurmstepd (proctrack/pgid) waits for that group to empty, sleeping
        1 s, 2 s, ...: a batch job with one srun ended 3 s after its script did,
        whenever this host's PID 1 reaps late (seen: a container's init).  Under
        a subreaper that reaps at once, the job ends when its script does.
        """
        log = self.layout.state_dir / "log" / f"reaper-{name}.log"
        self._stop_clients(name)  # a revived node gets new ones
        prefix = []
        # The node's own mount namespace and client of each file system.  Each wrapper
        # ends with `exec "$@"`: GlusterFS's execs CephFS's, whose namespace (a slave of
        # GlusterFS's) keeps the node's GlusterFS mount and gets its own ceph-fuse.
        if "gluster" in self.layout.file_systems:
            prefix += self.gluster.layout.node_wrapper(name, mount=mount, options=options)
        if "cephfs" in self.layout.file_systems:
            prefix += self.ceph.layout.node_wrapper(name, mount=mount)
        with open(log, "ab") as out:
            subprocess.Popen([*prefix, sys.executable, str(Path(__file__).resolve()),
                              REAP_COMMAND, "slurmd", "-D", "-N", name],
                             env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                             start_new_session=True, close_fds=True)
        pidfile = self.layout.state_dir / f"slurmd-{name}.pid"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not self._live_pid(pidfile, "slurmd"):
            time.sleep(0.05)

    def _stop_clients(self, name: str) -> None:
        """Node ``name``'s client of each of the cluster's file systems stopped."""
        if "gluster" in self.layout.file_systems:
            self.gluster.stop_client(name)
        if "cephfs" in self.layout.file_systems:
            self.ceph.stop_client(name)

    def stop_slurmd(self, name: str, timeout: float = 20) -> None:
        """Stop node ``name``'s slurmd (by its pid file) and wait until it has gone."""
        pid = self._live_pid(self.layout.state_dir / f"slurmd-{name}.pid", "slurmd")
        if not pid:
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.1)
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)

    def node_without_mount(self, name: str, timeout: float = 60) -> str:
        """Restart node ``name`` in a namespace without the volume's client (with two
        file systems: without either): the classic acceptance-day fault of a node that
        lost its mount (`up` restores it)."""
        self._restart_node(name, "unmount", timeout, mount=False)
        if self.layout.file_systems == ("gluster", "cephfs"):
            return (f"node {name}: restarted without its GlusterFS and ceph-fuse clients "
                    f"({self.gluster.layout.mount_point} and {self.ceph.layout.mount_point} "
                    "are bare directories there)")
        if self.layout.fs == "cephfs":
            return (f"node {name}: restarted without its ceph-fuse client "
                    f"({self.ceph.layout.mount_point} is a bare directory there)")
        return (f"node {name}: restarted without its GlusterFS client "
                f"({self.gluster.layout.mount_point} is a bare directory there)")

    def node_remounted(self, name: str, options: tuple[str, ...] | None,
                       timeout: float = 60) -> str:
        """Restart node ``name`` with a client of its own mounted with ``options``
        (``attribute-timeout=10``...; None: the lab's own): one node that differs from
        the others, as a site's misconfigured client does (`up` restores the lab's)."""
        if options is None and "gluster" in self.layout.file_systems:
            options = self.gluster.layout.client_options
        self._restart_node(name, "remount", timeout, options=options)
        return (f"node {name}: restarted with its GlusterFS client mounted with "
                f"{','.join(options or ()) or 'the defaults'}"
                + ("; its ceph-fuse as every node's" if "cephfs" in self.layout.file_systems
                   else ""))

    def _restart_node(self, name: str, command: str, timeout: float, mount: bool = True,
                      options: tuple[str, ...] | None = None) -> None:
        """Node ``name``'s slurmd and its file system's client stopped, then started
        again as asked; refused, before anything stops, without a file system (remount:
        off GlusterFS, whose client options it sets) or for an unknown node."""
        allowed = ("gluster",) if command == "remount" else ("gluster", "cephfs")
        if not set(allowed) & set(self.layout.file_systems):
            raise ClusterError(f"{command} needs a cluster brought up with "
                               f"{' or '.join('--fs ' + f for f in allowed)}")
        if name not in self.layout.node_names:
            raise ClusterError(f"no node {name!r} in this cluster")
        gfs.client_flags(options or ())  # refused before the node is stopped
        self.stop_slurmd(name)
        self._stop_clients(name)
        self.start_slurmd(name, mount=mount, options=options)
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        states: dict[str, str] = {}
        revived = False
        while time.monotonic() < deadline:
            states = self.node_states()
            # Up and responding; allocated nodes (jobs running) count.
            ready = [n for n, st in states.items() if st in READY_STATES]
            if len(ready) == self.layout.nodes:
                if "gluster" in self.layout.file_systems:
                    try:
                        self.gluster.wait_connected(self.layout.node_names)
                    except gfs.GlusterError as err:
                        cut_off = [] if revived else self.gluster.cut_off_clients(
                            self.layout.node_names)
                        if not cut_off:
                            raise ClusterError(str(err)) from None
                        # Once: those nodes restarted with a new client each.
                        print(f"local-cluster: {err}: restarting {', '.join(cut_off)} with "
                              "a new client", file=sys.stderr)
                        for name in cut_off:
                            self.stop_slurmd(name)
                            self.start_slurmd(name)  # its client is mounted before slurmd
                        if not all(self.gluster.client_pid(n) for n in cut_off):
                            raise ClusterError(f"{err}: restarted {', '.join(cut_off)}, and "
                                               "a node came back without its client")
                        revived, deadline = True, time.monotonic() + timeout
                        continue
                return
            time.sleep(0.5)
        raise ClusterError(
            f"nodes not ready after {timeout:.0f} s (sinfo: {states or 'no answer'})\n"
            + self._log_tails())

    def down(self, timeout: float = 20) -> str:
        cleared = self.limits.clear() if self.limits.current() or self.limits.network() else ""
        live = self.running_daemons()
        if "slurmctld" in live:
            # Our own cluster: every job on it is ours.
            self._run(["scancel", "--full", "--user", str(os.getuid())],
                      check=False, timeout=15)
        own = self.layout.state_dir / "munged.pid"
        munged = (self._live_pid(own, "munged")
                  or self._live_pid(self.MUNGED_HANDOVER, "munged"))
        for pid in live.values():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(pid_alive(p) for p in live.values()):
            time.sleep(0.2)
        killed = [n for n, p in live.items() if pid_alive(p)]
        for name in killed:
            os.kill(live[name], signal.SIGKILL)
        # After slurmctld: it hands its last job records to slurmdbd as it stops.
        accounting = self.accounting.down(timeout)
        kept = ""
        if munged:
            # One munged serves every cluster on this host: another checkout's (or
            # port base's) daemons still use it, whoever started it.  It is handed over
            # (MUNGED_HANDOVER): the last cluster to go down stops it.
            others = slurm_daemon_pids()
            if others:
                kept = (f"; munged left running (started by an up, still used by Slurm "
                        f"daemons {', '.join(map(str, others))}: the last cluster down "
                        f"stops it)")
                self.MUNGED_HANDOVER.write_text(f"{munged}\n")
            else:
                _stop_pid(munged, timeout)
                live["munged (started by up)"] = munged
                self.MUNGED_HANDOVER.unlink(missing_ok=True)
            own.unlink(missing_ok=True)
        gluster = self.endpoints.down()
        gluster += self.gluster.down() if self.gluster.layout.run_dir.is_dir() else []
        # Its clients (the nodes' and the login node's), then its daemons, by pid file.
        gluster += self.ceph.down() if self.ceph.layout.run_dir.is_dir() else []
        kept += f"; {cleared}" if cleared else ""
        if not live and not gluster and not accounting:
            return "local cluster: nothing running" + kept
        msg = f"local cluster down: stopped {', '.join(sorted(live) + accounting + gluster)}"
        if killed:
            msg += f" (SIGKILL after {timeout:.0f} s: {', '.join(killed)})"
        return msg + kept

    def slow_target(self, target: str, percent: float) -> str:
        """Make one storage target slow (lab/limits.py): a GlusterFS brick (``b2``) or a
        CephFS OSD (``osd.1``), by its daemon's pid."""
        if target.startswith("osd."):
            self._need_ceph("limit --target osd.N")
            pid = self.ceph.running().get(target)
            known = sorted(n for n in self.ceph.running() if n.startswith("osd."))
        else:
            pids = self.gluster.brick_pids()
            pid, known = pids.get(target), sorted(pids)
        if not pid:
            raise ClusterError(f"limit: no running target {target!r} (running: "
                               f"{', '.join(known) or 'none'})")
        return self.limits.slow_target(target, [pid], percent)

    def slow_network(self, rate: str, endpoints_only: bool = False) -> str:
        """Limit the network between the clients and the GlusterFS servers to ``rate``
        (``50MiB/s``) each way (lab/limits.py): what goes to the servers' address and
        what comes from it, the iperf3 servers' too.  ``endpoints_only``: only the lab's
        iperf3 servers' ports (a fixture: the network check measures a network slower
        than the one the file system's traffic then crosses)."""
        if "gluster" not in parse_fs(recorded_fs(self.layout.state_dir)):
            raise ClusterError("limit --network: the lab runs no GlusterFS (up --fs gluster)")
        match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*([KMG]i?B)/s", rate.strip())
        if not match:
            raise ClusterError(f"limit --network: {rate!r} is not a rate like 50MiB/s")
        unit = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 10**3, "MB": 10**6,
                "GB": 10**9}.get(match[2])
        if unit is None:
            raise ClusterError(f"limit --network: {match[2]!r} is not KiB, MiB, GiB, KB, MB "
                               "or GB")
        return self.limits.limit_network(
            self.gluster.layout.address, int(float(match[1]) * unit),
            tuple(self.endpoints.ports) if endpoints_only else ())

    def fail_node(self, name: str) -> str:
        """Kill node ``name`` the way a crash would: its slurmd and every
        slurmstepd serving it (with their tasks), all with SIGKILL."""
        live = self.running_daemons()
        if f"slurmd {name}" not in live:
            raise ClusterError(f"no running slurmd for node {name!r} "
                               f"(running: {', '.join(sorted(live)) or 'none'})")
        spool = self.layout.state_dir / "spool" / name
        steps = step_daemons(spool)
        victims = [live[f"slurmd {name}"]] + steps
        for pid in steps:  # tasks first: a dead node's processes all vanish
            for child in _children(pid):
                _kill(child)
        for pid in victims:
            _kill(pid)
        return (f"node {name}: killed slurmd (pid {live[f'slurmd {name}']}) and "
                f"{len(steps)} job step daemon(s); Slurm marks it DOWN after SlurmdTimeout")

    def status(self) -> tuple[int, str]:
        live = self.running_daemons()
        if not live:
            return 3, "local cluster: not running"
        proc = self._run(["sinfo", "-N", "-o", "%N %P %T %c %m"], check=False)
        daemons = ", ".join(f"{n} (pid {p})" for n, p in sorted(live.items()))
        said = f"daemons: {daemons}\n{proc.stdout}{proc.stderr}".rstrip()
        if (limits := self.limits.describe()):
            said += "\n" + limits
        if "cephfs" in self.layout.file_systems:
            said += "\n" + self.ceph_status()
        return 0, said

    # -- CephFS (--fs cephfs) ---------------------------------------------------
    def _need_ceph(self, command: str) -> None:
        if "cephfs" not in parse_fs(recorded_fs(self.layout.state_dir)):
            raise ClusterError(f"{command} needs a cluster brought up with --fs cephfs")

    def ceph_status(self) -> str:
        """Ceph's daemons and clients that run (pids), and what keeps it from being whole."""
        run = dict(self.ceph.running())
        for f in sorted(self.ceph.layout.run_dir.glob("client.*.pid")):
            node = f.name.removeprefix("client.").removesuffix(".pid")
            if (pid := self.ceph.client_pid(node)):
                run[f"client.{node}"] = pid
        said = "ceph: " + (", ".join(f"{n} (pid {p})" for n, p in run.items()) or "nothing running")
        return said + "\n" + self.ceph_healed()[1]

    def fail_mds(self) -> str:
        """Kill the active MDS (SIGKILL, as a crash would); the standby takes its rank
        once the monitor has missed its beacons (mds_beacon_grace, 15 s)."""
        self._need_ceph("fail-mds")
        name = self.ceph.kill_active_mds()
        return (f"mds.{name}: killed the active MDS (SIGKILL); the standby takes its rank "
                "once the monitor misses its beacons (`restore` starts it again)")

    def fail_osd(self, osd: str, timeout: float = 90) -> str:
        """Kill OSD ``osd`` (SIGKILL, as a crash would) and wait until the monitor marks
        it down (its peers report it after osd_heartbeat_grace, 20 s): a fault, when this
        returns.  It stays ``in``: its placement groups run degraded."""
        self._need_ceph("fail-osd")
        if not osd.isdigit() or int(osd) not in self.ceph.layout.osd_ids:
            raise ClusterError(f"no OSD {osd!r} in this lab (0-{self.ceph.layout.osds - 1})")
        said = self.ceph.stop_osd(int(osd), sig=signal.SIGKILL)
        start = time.monotonic()
        self.ceph._wait(lambda: self.ceph.health(timeout=20).osds_up < self.ceph.layout.osds,
                        timeout, f"the monitor did not mark osd.{osd} down")
        return f"{said}; marked down by the monitor {time.monotonic() - start:.0f} s later"

    def ceph_restore(self, timeout: float = 90) -> str:
        """Start every Ceph daemon of ours that is not running (a killed MDS comes back
        as a standby, a killed OSD rejoins and its PGs recover: `healed` says when), and
        give a client that died (`fail-client`) a new one: the login node's mounted
        again, a node's slurmd restarted with its own (every node's, when the login
        node's was mounted again: its mount reached their namespaces, over their own)."""
        self._need_ceph("restore")
        started = [f"{k}.{i}" for k, i in self.ceph.layout.daemons if self.ceph.start(k, i)]
        login = not self.ceph.client_pid("login")
        try:
            if login:
                self.ceph.unmount("login")  # a dead client's mount, if any
                self.ceph.mount(node="login")
        except cfs.CephError as err:
            raise ClusterError(str(err)) from None
        nodes = [n for n in self.layout.node_names
                 if login or not self.ceph.client_pid(n)]
        if nodes and "slurmctld" in self.running_daemons():
            for name in nodes:
                self.stop_slurmd(name)
                self.start_slurmd(name)
            self.wait_ready(timeout)
        said = ([f"started {', '.join(started)}"] if started else []) + \
            (["mounted the login node's client again"] if login else []) + \
            ([f"restarted {', '.join(nodes)} with a new client"] if nodes else [])
        return ("ceph: " + "; ".join(said)) if said else \
            "ceph: every daemon and client was running"

    # -- what the cluster's file systems share ------------------------------------
    def _recorded_file_systems(self) -> tuple[str, ...]:
        """The file systems of the running cluster; GlusterFS's without any (its
        commands then say what is not running)."""
        return parse_fs(recorded_fs(self.layout.state_dir)) or ("gluster",)

    def fail_client(self, node: str) -> str:
        """Kill node ``node``'s client of each of the cluster's file systems (SIGKILL, as a
        crash would; with two, both): `up` restarts the node with new ones."""
        return "\n".join(self.ceph.kill_client(node) if name == "cephfs"
                         else self.gluster.kill_client(node)
                         for name in self._recorded_file_systems())

    def healed(self) -> tuple[bool, str]:
        """The degraded-mode run's `healed`: whether each of the cluster's file systems has
        healed (with two, both), and what each said."""
        said = [self.ceph_healed() if name == "cephfs" else self.gluster.healed()
                for name in self._recorded_file_systems()]
        return all(done for done, _ in said), "\n".join(text for _, text in said)

    def ceph_healed(self) -> tuple[bool, str]:
        """Every PG active+clean, one MDS active and the others standing by."""
        try:
            health = self.ceph.health(timeout=20)
        except cfs.CephError as err:
            return False, f"ceph: not healed: {err}"
        return cfs.healed(health, self.ceph.layout)


def step_daemons(spool: Path) -> list[int]:
    """Pids of the slurmstepd processes listening on sockets in a node's spool dir."""
    inodes = set()
    try:
        for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 8 and fields[7].startswith(str(spool) + "/"):
                inodes.add(fields[6])
    except OSError:
        return []
    pids = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    pids.add(int(fd_dir.parent.name))
                    break
        except OSError:
            continue
    return sorted(pids)


def _children(pid: int) -> list[int]:
    """All descendants of ``pid``."""
    out: list[int] = []
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for kid in map(int, kids):
        out += [kid] + _children(kid)
    return out


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


#: Hidden first argument of this module: run a command under :func:`reap_orphans`.
REAP_COMMAND = "_reap-orphans"
PR_SET_CHILD_SUBREAPER = 36


def reap_orphans(argv: list[str]) -> int:
    """Run ``argv`` as this process's child, become the subreaper of everything it
    starts (PR_SET_CHILD_SUBREAPER) and reap each process as soon as it ends.
    Returns when no descendant is left; the exit status is the command's."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"reap_orphans: prctl failed (errno {ctypes.get_errno()}); orphans go to "
              "PID 1", file=sys.stderr)
    child = os.fork()
    if child == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    status = 0
    while True:
        try:
            pid, wstatus = os.wait()
        except ChildProcessError:
            return status
        except InterruptedError:
            continue
        if pid == child:
            status = os.waitstatus_to_exitcode(wstatus)


def pid_alive(pid: int) -> bool:
    """True while the process runs (a zombie awaiting its reaper counts as stopped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child of ours counts as stopped.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def quota_command(cluster: LocalCluster, command: str) -> int:
    """The lab's quota commands on its GlusterFS volume, as a site's would be declared
    (lab/systems/local_gluster.py): the directory and the limit from the environment the
    quota program gives them; ``quota-usage`` prints the bytes counted."""
    directory = os.environ.get("FSACCEPT_QUOTA_DIR", "")
    if not directory:
        raise ClusterError(f"{command}: FSACCEPT_QUOTA_DIR is not set (the quota check "
                           "sets it)")
    if "gluster" not in cluster.layout.file_systems:
        raise ClusterError(f"{command}: the lab has quota commands for its GlusterFS "
                           f"volume only (this cluster: {cluster.layout.fs})")
    if command == "quota-set":
        limit = os.environ.get("FSACCEPT_QUOTA_BYTES", "")
        if not limit.isdigit():
            raise ClusterError(f"quota-set: FSACCEPT_QUOTA_BYTES {limit!r} is not a number "
                               "of bytes")
        print(cluster.gluster.quota_set(directory, int(limit)))
    elif command == "quota-clear":
        print(cluster.gluster.quota_clear(directory))
    else:
        print(cluster.gluster.quota_usage(directory))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [REAP_COMMAND]:
        return reap_orphans(argv[1:])
    parser = argparse.ArgumentParser(
        prog="local-cluster",
        description="A real multi-node Slurm cluster emulated on this host.")
    parser.add_argument("command", choices=["up", "down", "status", "env", "fail",
                                            "fail-client", "fail-brick", "unmount",
                                            "remount",
                                            "restore-bricks", "healed",
                                            "fail-mds", "fail-osd", "restore",
                                            "quota-set", "quota-clear", "quota-usage",
                                            "limit"])
    parser.add_argument("node", nargs="?",
                        help="for `fail`: the node to kill (slurmd and its job steps), to "
                             "test how a run survives a node failure; `fail-client`: the "
                             "node whose GlusterFS (or ceph-fuse; with both, both) client "
                             "to kill; `unmount`: the node to "
                             "restart without its client (with both, without either); "
                             "`remount`: the node to restart "
                             "with a GlusterFS client mounted with --mount-options; "
                             "`fail-brick`: the brick (b1...) "
                             "whose daemon to kill; `up` revives each.  `restore-bricks` "
                             "restarts killed brick daemons; `healed` exits 0 once the "
                             "volume reports nothing left to heal.  With --fs cephfs: "
                             "`fail-mds` kills the active MDS, `fail-osd` the OSD given "
                             "(0, 1, ...), `restore` starts the killed daemons and "
                             "clients again, and `healed` exits 0 once every placement "
                             "group is active+clean and an MDS is active with its standby.  "
                             "`quota-set`, `quota-clear` and `quota-usage` are the lab's "
                             "quota commands (the quota check's extras.quota): on the "
                             "directory FSACCEPT_QUOTA_DIR, a limit of FSACCEPT_QUOTA_BYTES")
    # No argparse choices: an unknown name gets ClusterLayout's one line, exit 2.
    parser.add_argument("--fs", default=None,
                        help="for `up`: `gluster` adds a GlusterFS volume mounted on every "
                             f"node by a client of its own at {gfs.MOUNT_POINT}, `cephfs` a "
                             "CephFS (its own monitor, manager, 3 OSDs, 2 MDS) mounted by a "
                             f"ceph-fuse of its own at {cfs.MOUNT_POINT}, `gluster,cephfs` "
                             "both (every node mounts each, by a client of each; in either "
                             "order), `none` neither (default: "
                             "what the running cluster has, else none)")
    parser.add_argument("--gluster-volume-type", choices=gfs.VOLUME_TYPES, default=None,
                        help="for `up --fs gluster`: the volume's type, each type its own "
                             "volume and bricks (default: what the running cluster has, "
                             "else distribute)")
    parser.add_argument("--gluster-brick-size", default=None, metavar="SIZE",
                        help="for `up --fs gluster`: each brick a loop-mounted ext4 image of "
                             "SIZE (e.g. 256M) under .state/gluster/images, removed by `down` "
                             "(default: what the running cluster has, else directories)")
    parser.add_argument("--mount-options", default=None, metavar="OPTS",
                        help="for `remount`: the node's GlusterFS client mount options, "
                             "comma-separated as mount -o takes them (e.g. "
                             "attribute-timeout=10,entry-timeout=10; '': GlusterFS's "
                             "defaults; not given: the lab's, "
                             f"{','.join(gfs.CLIENT_OPTIONS)})")
    parser.add_argument("--target", default=None, metavar="NAME",
                        help="for `limit`: the storage target to make slow, a brick (b2) or, "
                             "with CephFS, an OSD (osd.1): its daemon gets --percent of one "
                             "CPU (cgroup v1's cpu controller); `status` shows the limits")
    parser.add_argument("--network", default=None, metavar="RATE",
                        help="for `limit`: limit the network between the clients and the "
                             "GlusterFS servers (and the lab's iperf3 servers) to RATE each "
                             "way, e.g. 50MiB/s (tc htb on lo); `status` shows it")
    parser.add_argument("--endpoints-only", action="store_true",
                        help="for `limit --network`: only the lab's iperf3 servers' ports, "
                             "the file system's traffic unshaped (a fixture: the figures "
                             "then exceed the bound the network check measured)")
    parser.add_argument("--percent", type=float, default=lim.DEFAULT_PERCENT,
                        help="for `limit --target`: the CPU share, in percent of one CPU "
                             f"(default {lim.DEFAULT_PERCENT:g})")
    parser.add_argument("--clear", action="store_true",
                        help="for `limit`: remove every limit this lab set (`down` does too)")
    parser.add_argument("--accounting", default=None, metavar="MODE",
                        help="for `up`: `slurmdbd` runs Slurm accounting (slurmdbd and "
                             "MariaDB, under .state/accounting), `none` runs without, as a "
                             "site that has none (default: what the running cluster has, "
                             "else slurmdbd)")
    parser.add_argument("--nodes", type=int, default=None,
                        help=f"number of emulated nodes for `up` (default {DEFAULT_NODES})")
    parser.add_argument("--port-base", type=int, default=DEFAULT_PORT_BASE,
                        help="slurmctld port; slurmd nX listens on port-base + X "
                             f"(default {DEFAULT_PORT_BASE})")
    parser.add_argument("--timeout", type=float, default=90,
                        help="seconds `up` waits for all nodes to be ready")
    args = parser.parse_args(argv)
    try:
        state = default_state_dir()
        if args.command in ("up", "down", "fail", "fail-mds", "fail-osd", "restore", "limit"):
            # Two runs started together (a nightly and an acceptance run) both call
            # `up`: one starts the daemons, the other then finds them running.
            state.mkdir(parents=True, exist_ok=True)
            lock = open(state / "local-cluster.lock", "w")
            fcntl.flock(lock, fcntl.LOCK_EX)
        nodes = args.nodes
        if nodes is None:
            # Without --nodes, keep the size of a running cluster: `up` is then a no-op.
            probe = LocalCluster(ClusterLayout(state))
            running = probe.running_node_count() if probe.running_daemons() else None
            nodes = running or DEFAULT_NODES
        fs = args.fs or recorded_fs(state)
        cluster = LocalCluster(ClusterLayout(state, nodes=nodes, port_base=args.port_base,
                                             fs=fs,
                                             accounting=args.accounting
                                             or recorded_accounting(state),
                                             gluster_volume_type=args.gluster_volume_type
                                             or recorded_volume_type(state),
                                             gluster_brick_size=recorded_brick_size(state)
                                             if args.gluster_brick_size is None
                                             else args.gluster_brick_size))
        if args.command == "up":
            if os.geteuid() != 0:
                raise ClusterError("local-cluster up must run as root "
                                   "(slurmd and munged need it)")
            print(cluster.up(args.timeout))
        elif args.command == "down":
            print(cluster.down())
        elif args.command == "status":
            code, text = cluster.status()
            print(text)
            return code
        elif args.command == "fail":
            if not args.node:
                raise ClusterError("fail needs a node name, e.g. `local-cluster fail n2`")
            print(cluster.fail_node(args.node))
        elif args.command == "restore-bricks":
            print(cluster.gluster.restore_bricks())
        elif args.command == "healed":
            # The degraded-mode run's `healed` command: exit 0 once healed.
            done, said = cluster.healed()
            print(said)
            return 0 if done else 1
        elif args.command == "fail-mds":
            print(cluster.fail_mds())
        elif args.command == "fail-osd":
            if not args.node:
                raise ClusterError("fail-osd needs an OSD number, e.g. `local-cluster "
                                   "fail-osd 1`")
            print(cluster.fail_osd(args.node))
        elif args.command in ("quota-set", "quota-clear", "quota-usage"):
            return quota_command(cluster, args.command)
        elif args.command == "restore":
            print(cluster.ceph_restore())
        elif args.command == "limit":
            if args.clear + bool(args.target) + bool(args.network) != 1:
                raise ClusterError("limit needs one of --target NAME, --network RATE or "
                                   "--clear")
            print(cluster.limits.clear() if args.clear
                  else cluster.slow_network(args.network, args.endpoints_only)
                  if args.network
                  else cluster.slow_target(args.target, args.percent))
        elif args.command == "remount":
            if not args.node:
                raise ClusterError("remount needs a node name, e.g. `local-cluster remount n2 "
                                   "--mount-options attribute-timeout=10`")
            options = tuple(o for o in args.mount_options.split(",") if o) \
                if args.mount_options is not None else None
            print(cluster.node_remounted(args.node, options))
        elif args.command in ("fail-client", "fail-brick", "unmount"):
            if not args.node:
                raise ClusterError(f"{args.command} needs a node (or brick) name")
            if args.command == "fail-client":
                print(cluster.fail_client(args.node))
            elif args.command == "fail-brick":
                print(cluster.gluster.kill_brick(args.node))
            else:
                print(cluster.node_without_mount(args.node))
        else:
            print(f"export SLURM_CONF={cluster.conf}")
    except (ClusterError, gfs.GlusterError, cfs.CephError, acct.AccountingError,
            ep.EndpointError,
            lim.LimitError) as err:
        print(f"local-cluster: error: {err}", file=sys.stderr)
        return 2
    except subprocess.TimeoutExpired as err:
        print(f"local-cluster: error: {' '.join(err.cmd)} timed out after "
              f"{err.timeout:.0f} s", file=sys.stderr)
        return 2
    return 0


def _user() -> str:
    """The user who runs the cluster's jobs: set up in sacctmgr with its account."""
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name


def slurm_daemon_pids() -> list[int]:
    """Pids of the slurmctld, slurmd and slurmdbd processes running on this host (any cluster's)."""
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() in ("slurmctld", "slurmd", "slurmdbd"):
                pid = int(comm.parent.name)
                if pid_alive(pid):
                    pids.append(pid)
        except (OSError, ValueError):
            continue
    return sorted(pids)


def _stop_pid(pid: int, timeout: float) -> None:
    """SIGTERM, then SIGKILL if it still runs after ``timeout`` s."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.2)
    if pid_alive(pid):
        _kill(pid)


# Last, so that every function above is defined when `python3 -m lab.cluster` runs it.
if __name__ == "__main__":
    sys.exit(main())
