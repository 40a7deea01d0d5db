"""A second real parallel file system for the emulated cluster: CephFS, with a metadata
server that fails over and object stores that rebuild (issue 42).

One monitor, one manager, BlueStore OSDs on sparse files and two MDS daemons (one
active, one standby), all Debian 12's Ceph 16.2 and all our own: their configuration,
data, logs, pid files and admin sockets live under ``state_dir`` (``.state/ceph/``),
they listen on loopback ports from ``port_base + MON_PORT`` (the monitor) and
``port_base + DAEMON_PORTS`` (the others), and they run with ``auth none``.  Nothing
under ``/etc/ceph`` or ``/var/lib/ceph`` is read or written, and a daemon we did not
start is never touched: each is stopped only by its own pid file.

Clients are ``ceph-fuse`` processes, one per mount, named ``client.<node>``: the login
node's (this host's namespace) is mounted by :meth:`Ceph.mount`, and an emulated node's
by :meth:`CephLayout.node_wrapper`, the prefix that runs its ``slurmd`` in a mount
namespace of its own, as :mod:`.gluster` does for GlusterFS.

Standard library only, like :mod:`.cluster` (runs before any virtual environment).
The parsing of Ceph's JSON (:func:`parse_status`, :func:`parse_fs_status`) and the
judgement of what is not up (:func:`problems`) are pure and unit-tested on captures
(``tests/data/ceph/``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from lab import gluster as gfs

DEFAULT_PORT_BASE = 17000
#: The monitor listens on port_base + MON_PORT (msgr2 only); the manager, OSDs and MDS
#: daemons take ports from port_base + DAEMON_PORTS (the slurmds use port_base + 1..64,
#: accounting + 100 and + 101, GlusterFS's bricks + 200..299).
MON_PORT = 300
DAEMON_PORTS = (301, 399)
#: Each OSD binds 4 ports (public, cluster, two heartbeats); the manager and each MDS one.
PORTS_PER_OSD = 4
ADDRESS = "127.0.0.1"
FS_NAME = "cephfs"
METADATA_POOL = "cephfs_metadata"
DATA_POOL = "cephfs_data"
MON_ID = "a"
MGR_ID = "x"
MDS_IDS = ("a", "b")
#: The same path on every node and on the login node.
MOUNT_POINT = Path("/mnt/fsaccept-cephfs")
#: What findmnt shows as the FSTYPE of a ceph-fuse mount.
FUSE_FSTYPE = "fuse.ceph-fuse"
#: The program of each daemon kind, and the Debian package it comes from.
PROGRAMS = {"mon": "ceph-mon", "mgr": "ceph-mgr", "osd": "ceph-osd", "mds": "ceph-mds",
            "client": "ceph-fuse"}
TOOLS = {"ceph-mon": "ceph-mon", "ceph-mgr": "ceph-mgr", "ceph-osd": "ceph-osd",
         "ceph-mds": "ceph-mds", "ceph-fuse": "ceph-fuse", "ceph": "ceph-common",
         "monmaptool": "ceph-common", "unshare": "util-linux"}
#: A client (node) name: it becomes a file name and a Ceph entity name.
CLIENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
#: osd_memory_target's minimum in Ceph 16.2 (896 MiB; below it the daemon refuses
#: the configuration).  It is a target the OSD trims its caches towards, not a limit.
OSD_MEMORY_TARGET_MIN = 896 << 20
_SIZE = re.compile(r"([1-9][0-9]*)([MG])")


class CephError(Exception):
    """A problem the user can act on; printed as one line, no traceback."""


def _bytes(size: str) -> int:
    m = _SIZE.fullmatch(size)
    if not m:
        raise CephError(f"size {size!r} is not a size like 64M or 2G")
    return int(m[1]) << {"M": 20, "G": 30}[m[2]]


@dataclass(frozen=True)
class CephLayout:
    """Every path, port, daemon and setting of the lab's Ceph cluster."""

    state_dir: Path                 # .state/ceph
    port_base: int = DEFAULT_PORT_BASE
    osds: int = 3
    #: Each OSD's BlueStore block device: a sparse file of this size.
    osd_size: str = "2G"
    #: Copies of each object (at most ``osds``); min_size is Ceph's default, size - size/2.
    replicas: int = 3
    osd_memory_target: str = "896M"
    #: BlueStore's cache, fixed (autotuning off): without it the OSD sizes its caches
    #: from osd_memory_target.
    bluestore_cache: str = "64M"
    mds_cache: str = "128M"
    mon_memory_target: str = "256M"
    #: RocksDB's block cache in the monitor and in each OSD (512M by default).
    rocksdb_cache: str = "64M"
    metadata_pgs: int = 8
    data_pgs: int = 16
    mount_point: Path = MOUNT_POINT
    mds_ids: tuple[str, ...] = field(default=MDS_IDS)

    @classmethod
    def for_port_base(cls, state_dir: Path, port_base: int, **kw) -> "CephLayout":
        """The layout of a cluster on ``port_base``: another port base than the default
        gets a mount point of its own, so that two checkouts never share one."""
        if port_base != DEFAULT_PORT_BASE:
            kw.setdefault("mount_point", Path(f"{MOUNT_POINT}-{port_base}"))
        return cls(state_dir, port_base, **kw)

    def __post_init__(self) -> None:
        if not 1024 <= self.port_base <= 65535 - DAEMON_PORTS[1]:
            raise CephError(f"port base must be between 1024 and "
                            f"{65535 - DAEMON_PORTS[1]}, got {self.port_base}")
        if not 1 <= self.osds <= 8:
            raise CephError(f"osds must be between 1 and 8, got {self.osds}")
        if not 1 <= self.replicas <= self.osds:
            raise CephError(f"replicas must be between 1 and the number of OSDs "
                            f"({self.osds}), got {self.replicas}")
        if len(self.mds_ids) < 1 or len(set(self.mds_ids)) != len(self.mds_ids) or not all(
                re.fullmatch(r"[a-z]", m) for m in self.mds_ids):
            raise CephError(f"MDS ids must be distinct single letters, got {self.mds_ids}")
        sizes = {"osd_size": self.osd_size, "osd_memory_target": self.osd_memory_target,
                 "bluestore_cache": self.bluestore_cache, "mds_cache": self.mds_cache,
                 "mon_memory_target": self.mon_memory_target,
                 "rocksdb_cache": self.rocksdb_cache}
        for key, size in sizes.items():
            if not _SIZE.fullmatch(size):
                raise CephError(f"{key} {size!r} is not a size like 64M or 2G")
        if _bytes(self.osd_size) < 1 << 30:
            raise CephError(f"osd_size {self.osd_size} is below 1G (BlueStore keeps "
                            "room of its own for its database and log)")
        if _bytes(self.osd_memory_target) < OSD_MEMORY_TARGET_MIN:
            raise CephError(f"osd_memory_target {self.osd_memory_target} is below Ceph "
                            "16.2's minimum, 896M (the OSD refuses it)")
        for key in ("metadata_pgs", "data_pgs"):
            pgs = getattr(self, key)
            if pgs < 1 or pgs & (pgs - 1) or pgs > 128:
                raise CephError(f"{key} must be a power of two up to 128, got {pgs}")
        needed = 1 + PORTS_PER_OSD * self.osds + len(self.mds_ids)
        if needed > DAEMON_PORTS[1] - DAEMON_PORTS[0] + 1:
            raise CephError(f"{self.osds} OSDs need {needed} ports, more than the "
                            f"{DAEMON_PORTS[1] - DAEMON_PORTS[0] + 1} of the range")

    # -- ports ---------------------------------------------------------------
    @property
    def mon_port(self) -> int:
        return self.port_base + MON_PORT

    @property
    def daemon_ports(self) -> tuple[int, int]:
        return self.port_base + DAEMON_PORTS[0], self.port_base + DAEMON_PORTS[1]

    @property
    def ports_needed(self) -> int:
        """Ports the manager, OSDs and MDS daemons take from :attr:`daemon_ports`."""
        return 1 + PORTS_PER_OSD * self.osds + len(self.mds_ids)

    @property
    def mon_addr(self) -> str:
        return f"v2:{ADDRESS}:{self.mon_port}"

    # -- paths ---------------------------------------------------------------
    @property
    def conf_path(self) -> Path:
        return self.state_dir / "ceph.conf"

    @property
    def fsid_path(self) -> Path:
        return self.state_dir / "fsid"

    @property
    def run_dir(self) -> Path:
        return self.state_dir / "run"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "log"

    def data_dir(self, kind: str, ident: str | int) -> Path:
        """A daemon's data directory (``mon/mon.a``, ``osd/osd.0``, ...)."""
        return self.state_dir / kind / f"{kind}.{ident}"

    def pidfile(self, kind: str, ident: str | int) -> Path:
        """A daemon's (or a client's: kind ``client``, ident its node) pid file."""
        return self.run_dir / f"{kind}.{ident}.pid"

    def mount_record(self, node: str) -> Path:
        """Where the mount point of ``node``'s client is recorded (``down`` unmounts it)."""
        return self.run_dir / f"client.{node}.mount"

    @property
    def osd_ids(self) -> list[int]:
        return list(range(self.osds))

    @property
    def daemons(self) -> list[tuple[str, str]]:
        """(kind, id) of every daemon, in the order they start."""
        return [("mon", MON_ID), ("mgr", MGR_ID), *[("osd", str(i)) for i in self.osd_ids],
                *[("mds", m) for m in self.mds_ids]]

    # -- configuration ---------------------------------------------------------
    def render_conf(self, fsid: str) -> str:
        """``ceph.conf``: every path under ``state_dir``, every port our own, ``auth
        none``, small caches.  ``$name`` is Ceph's ``<kind>.<id>``."""
        s, run, log = self.state_dir, self.run_dir, self.log_dir
        lo, hi = self.daemon_ports
        return "\n".join([
            "# Generated by lab/ceph.py; edits are overwritten.",
            "[global]",
            f"fsid = {fsid}",
            f"mon host = [{self.mon_addr}]",
            f"mon initial members = {MON_ID}",
            f"public addr = {ADDRESS}",
            f"cluster addr = {ADDRESS}",
            "ms bind msgr1 = false",
            "ms bind msgr2 = true",
            f"ms bind port min = {lo}",
            f"ms bind port max = {hi}",
            # Loopback only, one host: no keys to make, hand out or lose.
            "auth cluster required = none",
            "auth service required = none",
            "auth client required = none",
            f"keyring = {s / 'keyring'}",
            # A warning about cephx tickets (CVE-2021-20288), raised with auth none too,
            # where no ticket exists: HEALTH_WARN for ever otherwise.
            "mon warn on insecure global id reclaim = false",
            "mon warn on insecure global id reclaim allowed = false",
            f"run dir = {run}",
            f"crash dir = {s / 'crash'}",
            f"pid file = {run}/$name.pid",
            f"admin socket = {run}/$name.asok",
            f"log file = {log}/$name.log",
            f"mon cluster log file = {log}/cluster.log",
            f"osd pool default size = {self.replicas}",
            "osd pool default pg autoscale mode = off",
            # Every OSD on this one host: replicas go to distinct OSDs, not hosts.
            "osd crush chooseleaf type = 0",
            "mon allow pool delete = true",
            # The monitor warns (HEALTH_WARN) below 30 % free on its disk by default;
            # it stops below mon_data_avail_crit (5 %), which stays.
            "mon data avail warn = 10",
            # Not restful (needs a certificate) nor nfs (needs an orchestrator).
            "mgr initial modules = iostat",
            f"rocksdb cache size = {_bytes(self.rocksdb_cache)}",
            "",
            "[mon]",
            f"mon data = {s}/mon/$name",
            f"mon memory target = {_bytes(self.mon_memory_target)}",
            "",
            "[mgr]",
            f"mgr data = {s}/mgr/$name",
            "",
            "[osd]",
            f"osd data = {s}/osd/$name",
            "osd objectstore = bluestore",
            "bluestore block create = true",
            f"bluestore block size = {_bytes(self.osd_size)}",
            "bluestore fsck on mkfs = false",
            f"osd memory target = {_bytes(self.osd_memory_target)}",
            "bluestore cache autotune = false",
            f"bluestore cache size = {_bytes(self.bluestore_cache)}",
            "",
            "[mds]",
            f"mds data = {s}/mds/$name",
            f"mds cache memory limit = {_bytes(self.mds_cache)}",
            # Deleted files are purged in the background; at the defaults (0.5 ops per
            # PG: 8 at once over 16 data PGs) a main job's removed datasets were still
            # held when the next one began, and its capacity guard refused it.
            "mds max purge ops per pg = 8",
            "mds max purge files = 1024",
            "",
            "[client]",
            # The ceph CLI is a client too (client.admin), several at once: each its own.
            f"admin socket = {run}/$name.$pid.asok",
            "",
        ])

    def daemon_argv(self, kind: str, ident: str | int) -> list[str]:
        """The command that starts a daemon (it daemonizes and writes its pid file)."""
        return [PROGRAMS[kind], "-c", str(self.conf_path), "-i", str(ident)]

    def client_argv(self, node: str, mount_point: Path | None = None) -> list[str]:
        """``ceph-fuse`` for ``node`` (entity ``client.<node>``): it daemonizes once
        the file system is mounted, and writes ``run/client.<node>.pid``."""
        if not CLIENT_NAME.fullmatch(node):
            raise CephError(f"client name {node!r} is not a node name (letters, digits, "
                            "- and _, at most 32)")
        return ["ceph-fuse", "-c", str(self.conf_path), "--id", node,
                f"--pid-file={self.pidfile('client', node)}",
                f"--admin-socket={self.run_dir}/client.{node}.asok",
                str(mount_point or self.mount_point)]

    def node_wrapper(self, node: str, mount: bool = True) -> list[str]:
        """Prefix that runs a command (the node's slurmd) in a mount namespace of its
        own, where the file system is mounted by a ``ceph-fuse`` of its own at the mount
        point (``mount=False``: a node that lost its client, the path is then the bare
        directory below), as :meth:`.gluster.GlusterLayout.node_wrapper` does."""
        argv = self.client_argv(node)
        mp = str(self.mount_point)
        script = ['umount -l "$1" 2>/dev/null']  # the login node's client, copied in
        if mount:
            # $1 is the mount point, ${2}... the client's arguments before it.
            args = " ".join(f'"${{{i}}}"' for i in range(2, len(argv) + 1))
            script += [f'{args} "$1" || exit 97',
                       f'i=0; until [ "$(findmnt -n -o FSTYPE -M "$1")" = {FUSE_FSTYPE} ]; '
                       'do i=$((i+1)); [ $i -gt 200 ] && exit 98; sleep 0.05; done']
        script += [f'shift {len(argv)}', 'exec "$@"']
        return ["unshare", "-m", "--propagation", "slave", "--", "sh", "-c",
                "; ".join(script), "fsaccept-node", mp, *argv[:-1]]


# -- Ceph's JSON, parsed (pure) ----------------------------------------------------

@dataclass(frozen=True)
class CephHealth:
    """What ``ceph status`` and ``ceph fs status`` say, as facts."""

    status: str                                 # HEALTH_OK, HEALTH_WARN, HEALTH_ERR
    checks: dict[str, str]                      # code -> summary
    osds: int
    osds_up: int
    osds_in: int
    pgs: dict[str, int]                         # state -> count
    num_pgs: int
    degraded_ratio: float                       # of object copies, 0 when none
    active_mds: dict[int, str]                  # rank -> MDS name
    standby_mds: list[str]
    #: MDS name -> state, for every rank's MDS that is not active (replay, rejoin...).
    other_mds: dict[str, str]
    mgr_available: bool
    #: Seconds since the monitors formed their quorum (``quorum_age``).  Until it reaches
    #: mds_beacon_mon_down_grace (60 s), the monitor defers replacing an MDS whose
    #: beacons stopped: a failover within a minute of ``up`` waits until then.
    quorum_age: int

    @property
    def all_pgs_active_clean(self) -> bool:
        return self.num_pgs > 0 and self.pgs.get("active+clean", 0) == self.num_pgs


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"key {twice[0]!r} given twice")
    return dict(pairs)


def _json(text: str, what: str, kind: type = dict):
    """``text`` as JSON of ``kind``; a key given twice is refused (Ceph never does)."""
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except (ValueError, TypeError, RecursionError) as err:
        raise CephError(f"{what}: not JSON ({err}): {str(text)[:120]!r}") from None
    if not isinstance(data, kind):
        raise CephError(f"{what}: not a JSON {kind.__name__} but {type(data).__name__}")
    return data


def _get(data: dict, path: str, kind: type | tuple, what: str):
    """``data`` at the dotted ``path``, which must be of ``kind``."""
    node = data
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            raise CephError(f"{what}: no key {path!r}")
        node = node[key]
    if not isinstance(node, kind) or (isinstance(node, bool) and kind in (int, float)):
        raise CephError(f"{what}: {path!r} is {node!r}, not {_kind_name(kind)}")
    return node


def _kind_name(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _count(data: dict, path: str, what: str) -> int:
    value = _get(data, path, int, what)
    if value < 0:
        raise CephError(f"{what}: {path!r} is {value}, below zero")
    return value


def parse_status(text: str, what: str = "ceph status --format json") -> dict:
    """The health, OSD and placement-group facts of ``ceph status --format json``
    (Ceph 16.2: ``osdmap`` flat; older releases nest it once more)."""
    data = _json(text, what)
    status = _get(data, "health.status", str, what)
    if not re.fullmatch(r"HEALTH_(OK|WARN|ERR)", status):
        raise CephError(f"{what}: 'health.status' is {status!r}, not HEALTH_OK/WARN/ERR")
    checks = {}
    for code, check in _get(data, "health.checks", dict, what).items():
        summary = check.get("summary") if isinstance(check, dict) else None
        message = summary.get("message") if isinstance(summary, dict) else None
        checks[str(code)] = message if isinstance(message, str) else ""
    osdmap = _get(data, "osdmap", dict, what)
    if isinstance(osdmap.get("osdmap"), dict):
        data = dict(data, osdmap=osdmap["osdmap"])
    osds, up, in_ = (_count(data, f"osdmap.{k}", what)
                     for k in ("num_osds", "num_up_osds", "num_in_osds"))
    if up > osds or in_ > osds:
        raise CephError(f"{what}: {up} OSDs up and {in_} in of {osds}")
    pgs: dict[str, int] = {}
    for entry in _get(data, "pgmap.pgs_by_state", list, what):
        if not isinstance(entry, dict):
            raise CephError(f"{what}: 'pgmap.pgs_by_state' holds {entry!r}")
        state = _get(entry, "state_name", str, what)
        pgs[state] = pgs.get(state, 0) + _count(entry, "count", what)
    num_pgs = _count(data, "pgmap.num_pgs", what)
    if sum(pgs.values()) != num_pgs:
        raise CephError(f"{what}: 'pgmap.pgs_by_state' counts {sum(pgs.values())} PGs, "
                        f"'pgmap.num_pgs' {num_pgs}")
    ratio = data["pgmap"].get("degraded_ratio", 0)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) \
            or not 0 <= ratio <= 1:  # also NaN
        raise CephError(f"{what}: 'pgmap.degraded_ratio' is {ratio!r}, not between 0 and 1")
    mgr = data.get("mgrmap", {})
    return {"status": status, "checks": checks, "osds": osds, "osds_up": up,
            "osds_in": in_, "pgs": pgs, "num_pgs": num_pgs, "degraded_ratio": float(ratio),
            "mgr_available": isinstance(mgr, dict) and mgr.get("available") is True,
            "quorum_age": _count(data, "quorum_age", what)}


def parse_fs_status(text: str, what: str = "ceph fs status --format json") -> dict:
    """The MDS daemons of ``ceph fs status --format json`` (the manager's status
    module): each rank's MDS and its state, and the standbys.  A rank no MDS holds
    (``failed``) is named ``rank N``."""
    data = _json(text, what)
    active: dict[int, str] = {}
    standby: list[str] = []
    other: dict[str, str] = {}
    for mds in _get(data, "mdsmap", list, what):
        if not isinstance(mds, dict):
            raise CephError(f"{what}: 'mdsmap' holds {mds!r}")
        state = _get(mds, "state", str, what)
        name = mds.get("name")
        if state in ("standby", "standby-replay"):
            if not isinstance(name, str) or not name:
                raise CephError(f"{what}: a standby MDS without a name: {mds!r}")
            standby.append(name)
            continue
        rank = _get(mds, "rank", int, what)
        if rank < 0:
            raise CephError(f"{what}: MDS rank {rank} is below zero")
        label = name if isinstance(name, str) and name else f"rank {rank}"
        if rank in active or label in other:
            raise CephError(f"{what}: MDS rank {rank} ({label}) is listed twice")
        if state == "active":
            if label != name:
                raise CephError(f"{what}: active rank {rank} has no MDS name")
            active[rank] = name
        else:
            other[label] = state
    return {"active_mds": active, "standby_mds": sorted(standby), "other_mds": other}


def health_of(status_text: str, fs_status_text: str) -> CephHealth:
    return CephHealth(**parse_status(status_text), **parse_fs_status(fs_status_text))


def problems(health: CephHealth, layout: CephLayout) -> list[str]:
    """What keeps the cluster from being whole: HEALTH_OK, every OSD up and in, one
    active MDS and every other one standing by, every placement group active+clean.
    Empty when it is whole."""
    said = []
    if health.status != "HEALTH_OK":
        said.append(f"{health.status} ("
                    + "; ".join(f"{c}: {m}" if m else c for c, m in sorted(health.checks.items()))
                    + ")")
    if not health.mgr_available:
        said.append("no manager available")
    if (health.osds, health.osds_up, health.osds_in) != (layout.osds,) * 3:
        said.append(f"OSDs: {health.osds_up} up and {health.osds_in} in of {health.osds} "
                    f"({layout.osds} expected)")
    if len(health.active_mds) != 1:
        said.append(f"{len(health.active_mds)} active MDS, 1 expected")
    for name, state in sorted(health.other_mds.items()):
        said.append(f"MDS {name} {state}")
    if len(health.standby_mds) != len(layout.mds_ids) - 1:
        said.append(f"{len(health.standby_mds)} standby MDS "
                    f"({', '.join(health.standby_mds) or 'none'}), "
                    f"{len(layout.mds_ids) - 1} expected")
    if not health.all_pgs_active_clean:
        said.append("PGs not all active+clean: " + (", ".join(
            f"{n} {s}" for s, n in sorted(health.pgs.items()) if s != "active+clean")
            or "none yet"))
    return said


def healed(health: CephHealth, layout: CephLayout) -> tuple[bool, str]:
    """Whether the cluster has recovered from a fault (the degraded mode's ``healed``):
    every placement group active+clean, one MDS active and every other one standing by;
    and what it says, naming what is not there yet."""
    pgs = (f"{health.pgs.get('active+clean', 0)} of {health.num_pgs} PGs active+clean")
    mds = ", ".join([*(f"{n} active" for n in health.active_mds.values()),
                     *(f"{n} {s}" for n, s in sorted(health.other_mds.items())),
                     *(f"{n} standby" for n in health.standby_mds)]) or "none"
    left = []
    if not health.all_pgs_active_clean:
        left.append(pgs)
    if len(health.active_mds) != 1 or health.other_mds:
        left.append(f"MDS {mds}")
    if len(health.standby_mds) < len(layout.mds_ids) - 1:
        left.append(f"{len(health.standby_mds)} standby MDS, "
                    f"{len(layout.mds_ids) - 1} expected")
    if left:
        return False, "ceph: not healed: " + "; ".join(left)
    return True, f"ceph: healed: {pgs}, MDS {mds}"


# -- the daemons ----------------------------------------------------------------------

class Ceph:
    def __init__(self, layout: CephLayout, fuse_device: Path = Path("/dev/fuse")) -> None:
        self.layout = layout
        self.fuse_device = fuse_device

    # -- helpers -----------------------------------------------------------
    def cli(self, *args: str, check: bool = True, timeout: float = 60
            ) -> subprocess.CompletedProcess:
        """``ceph`` against our monitor (``--connect-timeout``: never waits for ever)."""
        argv = ["ceph", "-c", str(self.layout.conf_path), "--connect-timeout",
                str(int(max(timeout - 5, 5))), *args]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CephError(f"ceph {' '.join(args)} did not answer within {timeout:.0f} s "
                            f"(monitor on {self.layout.mon_addr})") from None
        if check and proc.returncode != 0:
            raise CephError(f"ceph {' '.join(args)} failed (exit {proc.returncode}): "
                            f"{(proc.stderr or proc.stdout).strip()[-400:]}")
        return proc

    def _run(self, argv: list[str], timeout: float = 120) -> None:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CephError(f"{' '.join(argv)} did not end within {timeout:.0f} s") from None
        if proc.returncode != 0:
            raise CephError(f"{' '.join(argv)} failed (exit {proc.returncode}): "
                            f"{(proc.stderr or proc.stdout).strip()[-400:]}")

    def pid(self, kind: str, ident: str | int) -> int | None:
        """The pid of our daemon (or client) if it runs, from its own pid file."""
        return gfs._pid_of(self.layout.pidfile(kind, ident), PROGRAMS[kind])

    def running(self) -> dict[str, int]:
        """``kind.id`` -> pid of every daemon of ours that runs (clients not included)."""
        return {f"{k}.{i}": pid for k, i in self.layout.daemons if (pid := self.pid(k, i))}

    def client_pid(self, node: str) -> int | None:
        return self.pid("client", node)

    @staticmethod
    def _wait(ready, timeout: float, what) -> None:
        """Until ``ready()``; else CephError ``what()`` (a callable: said at the end)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.5)
        raise CephError(f"{what() if callable(what) else what} within {timeout:.0f} s")

    def log_of(self, kind: str, ident: str | int) -> Path:
        return self.layout.log_dir / f"{kind}.{ident}.log"

    # -- checks before anything starts ---------------------------------------
    def check_prerequisites(self) -> None:
        for tool, package in TOOLS.items():
            if shutil.which(tool) is None:
                raise CephError(f"{tool} not found (Debian package {package}): "
                                "run scripts/setup")
        if not self.fuse_device.exists():
            raise CephError(f"{self.fuse_device} does not exist: ceph-fuse needs FUSE "
                            "(load the fuse module, or give the container /dev/fuse)")

    def check_ports_free(self) -> None:
        """The monitor's port must be free, and the daemons' range must have room: a
        Ceph we did not start is never used nor stopped."""
        if not _port_free(self.layout.mon_port):
            raise CephError(f"port {self.layout.mon_port} (for ceph-mon) is already in "
                            "use (a Ceph not started by fsaccept?): choose another port base")
        lo, hi = self.layout.daemon_ports
        free = sum(_port_free(p) for p in range(lo, hi + 1))
        if free < self.layout.ports_needed:
            raise CephError(f"only {free} of ports {lo}-{hi} are free, the Ceph daemons "
                            f"need {self.layout.ports_needed}: choose another port base")

    def fsid(self) -> str | None:
        try:
            return str(uuid.UUID(self.layout.fsid_path.read_text().strip()))
        except (OSError, ValueError):
            return None

    # -- up / down -----------------------------------------------------------
    def up(self, timeout: float = 240) -> str:
        """Bring every daemon up (making the monitor, OSDs and file system the first
        time) and wait until the cluster is whole: HEALTH_OK, every OSD up and in, an
        active MDS and its standby, every PG active+clean.  Revives a daemon that is
        not running."""
        lay = self.layout
        self.check_prerequisites()
        if not self.pid("mon", MON_ID):
            self.check_ports_free()
        for d in (lay.run_dir, lay.log_dir, lay.state_dir / "crash"):
            d.mkdir(parents=True, exist_ok=True)
        fsid = self.fsid()
        made = []
        if fsid is None:
            if lay.data_dir("mon", MON_ID).exists():
                raise CephError(f"{lay.data_dir('mon', MON_ID)} exists but {lay.fsid_path} "
                                "does not: a monitor this lab did not make; move it away")
            fsid = str(uuid.uuid4())
        lay.conf_path.write_text(lay.render_conf(fsid))
        if not lay.data_dir("mon", MON_ID).exists():
            self.make_mon(fsid)
            made.append("monitor")
        self.start("mon", MON_ID)
        self._wait(lambda: self.cli("mon", "stat", check=False, timeout=20).returncode == 0,
                   60, lambda: f"ceph-mon did not answer (log {self.log_of('mon', MON_ID)})")
        self.start("mgr", MGR_ID)
        for osd in lay.osd_ids:
            if not (lay.data_dir("osd", osd) / "whoami").exists():
                self.make_osd(osd)
                made.append(f"osd.{osd}")
            self.start("osd", osd)
        for mds in lay.mds_ids:
            self.start("mds", mds)
        if FS_NAME not in self.fs_names():
            self.make_fs()
            made.append(f"file system {FS_NAME}")
        self.wait_whole(timeout)
        ports = f"{lay.mon_addr}, daemons on {lay.daemon_ports[0]}-{lay.daemon_ports[1]}"
        return (f"ceph: {'made ' + ', '.join(made) + '; ' if made else ''}"
                f"{len(lay.daemons)} daemons up ({ports}), {lay.osds} BlueStore OSDs of "
                f"{lay.osd_size} (sparse), MDS {', '.join(lay.mds_ids)}: HEALTH_OK")

    def make_mon(self, fsid: str) -> None:
        lay = self.layout
        monmap = lay.run_dir / "monmap"
        monmap.unlink(missing_ok=True)
        self._run(["monmaptool", "--create", "--fsid", fsid, "--addv", MON_ID,
                   f"[{lay.mon_addr}]", str(monmap)])
        lay.data_dir("mon", MON_ID).mkdir(parents=True)
        self._run(["ceph-mon", "-c", str(lay.conf_path), "--mkfs", "-i", MON_ID,
                   "--monmap", str(monmap)])
        lay.fsid_path.write_text(fsid + "\n")

    def make_osd(self, osd: int) -> None:
        """``ceph osd new`` (its id must be ``osd``: OSDs are made in order) and a
        BlueStore on a sparse file, ``osd/osd.N/block``."""
        lay = self.layout
        data = lay.data_dir("osd", osd)
        if data.exists():
            raise CephError(f"{data} exists without its whoami (an OSD made in part, or "
                            "not by this lab): fsaccept does not delete it; move it away")
        osd_uuid = str(uuid.uuid4())
        said = self.cli("osd", "new", osd_uuid, str(osd)).stdout.strip()
        if said != str(osd):
            raise CephError(f"ceph osd new gave id {said!r}, {osd} expected (an OSD this "
                            "lab did not make?)")
        data.mkdir(parents=True)
        self._run([*lay.daemon_argv("osd", osd), "--mkfs", "--osd-uuid", osd_uuid],
                  timeout=300)

    def make_fs(self) -> None:
        lay = self.layout
        pools = self.cli("osd", "pool", "ls").stdout.split()
        for pool, pgs in ((METADATA_POOL, lay.metadata_pgs), (DATA_POOL, lay.data_pgs)):
            if pool not in pools:
                self.cli("osd", "pool", "create", pool, str(pgs), str(pgs))
        self.cli("fs", "new", FS_NAME, METADATA_POOL, DATA_POOL)

    def fs_names(self) -> list[str]:
        said = _json(self.cli("fs", "ls", "--format", "json").stdout, "ceph fs ls", list)
        return [fs.get("name") for fs in said if isinstance(fs, dict)]

    def start(self, kind: str, ident: str | int) -> bool:
        """Start our daemon if it is not running; True if it was started now."""
        if self.pid(kind, ident):
            return False
        self.layout.data_dir(kind, ident).mkdir(parents=True, exist_ok=True)
        self._run(self.layout.daemon_argv(kind, ident))
        self._wait(lambda: self.pid(kind, ident), 30,
                   lambda: f"{kind}.{ident} did not start (log {self.log_of(kind, ident)})")
        return True

    def stop(self, kind: str, ident: str | int, sig: int = signal.SIGTERM,
             timeout: float = 30) -> int | None:
        """Stop our daemon by its pid file (SIGKILL after ``timeout``); its pid, or None
        if it was not running."""
        pid = self.pid(kind, ident)
        if pid:
            if sig == signal.SIGTERM:
                gfs._stop(pid, timeout)
            else:
                os.kill(pid, sig)
            gfs._ended(pid, timeout)
        return pid

    def health(self, timeout: float = 30) -> CephHealth:
        return health_of(self.cli("status", "--format", "json", timeout=timeout).stdout,
                         self.cli("fs", "status", FS_NAME, "--format", "json",
                                  timeout=timeout).stdout)

    def not_running(self) -> list[str]:
        return [f"{k}.{i} (log {self.log_of(k, i)})" for k, i in self.layout.daemons
                if not self.pid(k, i)]

    def wait_whole(self, timeout: float = 240) -> CephHealth:
        """Until :func:`problems` finds none; else CephError naming what is not up."""
        last: list = [None, "no answer yet"]

        def whole() -> bool:
            try:
                last[0] = self.health(timeout=20)
            except CephError as err:
                last[1] = str(err)
                return False
            return not problems(last[0], self.layout) and not self.not_running()

        def said() -> str:
            down = self.not_running()
            what = problems(last[0], self.layout) if last[0] else [last[1]]
            return ("ceph is not whole: " + "; ".join(
                ([f"not running: {', '.join(down)}"] if down else []) + what))
        self._wait(whole, timeout, said)
        return last[0]

    def all_pgs_active_clean(self) -> bool:
        return self.health().all_pgs_active_clean

    def down(self, timeout: float = 30) -> list[str]:
        """Unmount and stop our clients, then every daemon, each by its own pid file, and
        nothing else."""
        stopped = []
        nodes = sorted(r.name.removeprefix("client.").removesuffix(".pid")
                       for r in self.layout.run_dir.glob("client.*.pid"))
        # The login node's last: its umount propagates into the nodes' namespaces (slaves
        # of this one) and takes their own mounts at the same path with it, and their
        # clients end on their own before they are stopped.
        for node in sorted(nodes, key=lambda n: n == "login"):
            if self.unmount(node):
                stopped.append(f"client {node}")
        for kind, ident in reversed(self.layout.daemons):
            if self.stop(kind, ident, timeout=timeout):
                stopped.append(f"{kind}.{ident}")
        given = self.discard()
        if given:
            stopped.append(f"the CephFS's data ({given >> 20} MiB given back; the next up "
                           "makes it anew)")
        return stopped

    def discard(self) -> int:
        """Remove what ``up`` made to hold data (each daemon's data directory, the OSDs'
        BlueStore block files among them, and the fsid), once none of its daemons runs:
        BlueStore on a file never returns what is deleted, and 3 OSDs of 8 GiB filled up
        run after run.  ``down`` so leaves the disk as ``up`` found it.  The bytes given
        back (0 with nothing to remove, or a daemon still running)."""
        lay = self.layout
        if any(self.pid(kind, ident) for kind, ident in lay.daemons):
            return 0
        dirs = [lay.data_dir(kind, ident) for kind, ident in lay.daemons]
        given = 0
        for d in dirs:
            if d.is_dir() and not d.is_symlink():
                for f in d.rglob("*"):
                    if f.is_file() and not f.is_symlink():
                        given += f.lstat().st_blocks * 512
                shutil.rmtree(d)
        lay.fsid_path.unlink(missing_ok=True)
        for kind in {k for k, _ in lay.daemons}:
            try:
                (lay.state_dir / kind).rmdir()  # only when empty: nothing else of ours
            except OSError:
                pass
        return given

    # -- clients ---------------------------------------------------------------
    def mount(self, mount_point: Path | None = None, node: str = "login",
              timeout: float = 60) -> Path:
        """Mount the file system with a ``ceph-fuse`` of its own (``client.<node>``) at
        ``mount_point`` (default: the layout's), in this process's mount namespace.
        An emulated node's client is mounted in the node's namespace instead, by
        :meth:`CephLayout.node_wrapper` (``lab/cluster.py`` prefixes its slurmd with it)."""
        mp = Path(mount_point or self.layout.mount_point)
        found = gfs.mount_of(mp)
        if found and found[1] == FUSE_FSTYPE and self.client_pid(node):
            return mp
        if found:
            raise CephError(f"{mp} is already a mount point ({found[1]} from {found[2]}): "
                            "fsaccept mounts its CephFS there")
        if self.client_pid(node):
            raise CephError(f"client.{node} already runs (pid {self.client_pid(node)}) "
                            "with another mount point")
        made = not mp.exists()  # removed by unmount, when empty: only what this made
        mp.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(self.layout.client_argv(node, mp), capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CephError(f"ceph-fuse for {mp} did not mount within {timeout:.0f} s (log "
                            f"{self.log_of('client', node)})") from None
        if proc.returncode != 0:
            raise CephError(f"mounting CephFS at {mp} failed: "
                            f"{(proc.stderr or proc.stdout).strip()[-400:]} (log "
                            f"{self.log_of('client', node)})")
        self.layout.mount_record(node).write_text(f"{mp}\n" + ("made\n" if made else ""))
        self._wait(lambda: (gfs.mount_of(mp) or ("", "", ""))[1] == FUSE_FSTYPE, 30,
                   f"{mp} was not mounted")
        return mp

    def unmount(self, node: str = "login", timeout: float = 30) -> bool:
        """Unmount ``node``'s client (in this namespace, where :meth:`mount` mounted it)
        and stop it; True if it was running."""
        record = self.layout.mount_record(node)
        # ceph-fuse ends by itself once unmounted, often before it is stopped below.
        running = self.client_pid(node)
        try:
            mp, *made = record.read_text().split("\n")
            mp = Path(mp)
        except OSError:
            mp, made = None, []
        found = gfs.mount_of(mp) if mp else None
        if found and found[1] == FUSE_FSTYPE:
            for argv in (["umount", str(mp)], ["umount", "-l", str(mp)]):
                try:
                    subprocess.run(argv, capture_output=True, timeout=timeout)
                except subprocess.TimeoutExpired:
                    pass
                if not gfs.mount_of(mp):
                    break
        if mp and "made" in made and not gfs.mount_of(mp):
            try:
                mp.rmdir()  # the directory mount made, when nothing is left in it
            except OSError:
                pass
        record.unlink(missing_ok=True)
        return bool(self.stop("client", node, timeout=timeout) or running)

    def stop_client(self, node: str) -> bool:
        return bool(self.stop("client", node))

    def kill_client(self, node: str) -> str:
        """Kill a node's ceph-fuse the way a crash would (SIGKILL)."""
        pid = self.stop("client", node, sig=signal.SIGKILL)
        if not pid:
            raise CephError(f"no running ceph-fuse for node {node!r}")
        return f"node {node}: killed its ceph-fuse (pid {pid})"

    # -- faults and their restoration -------------------------------------------
    def kill_active_mds(self) -> str:
        """SIGKILL the active MDS, as a crash would; its name.  The monitor hands its rank
        to the standby once the MDS's beacons stop for mds_beacon_grace (15 s), checked
        every 5 s, and not before its quorum is mds_beacon_mon_down_grace (60 s) old
        (:attr:`CephHealth.quorum_age`): right after ``up``, the takeover waits for that."""
        active = self.health().active_mds
        if len(active) != 1:
            raise CephError(f"no single active MDS to kill (active: {active or 'none'})")
        name = next(iter(active.values()))
        if name not in self.layout.mds_ids or not self.stop("mds", name, sig=signal.SIGKILL):
            raise CephError(f"the active MDS {name!r} is not one of ours running here")
        return name

    def start_mds(self, name: str) -> str:
        if name not in self.layout.mds_ids:
            raise CephError(f"no MDS {name!r} in this lab ({', '.join(self.layout.mds_ids)})")
        return f"mds.{name}: {'started' if self.start('mds', name) else 'already running'}"

    def stop_osd(self, osd: int, sig: int = signal.SIGTERM) -> str:
        """Stop one OSD (SIGTERM: it tells the monitor it is going down; SIGKILL: a
        crash, its peers report it).  It stays ``in``: its PGs run degraded."""
        if osd not in self.layout.osd_ids:
            raise CephError(f"no OSD {osd} in this lab (0-{self.layout.osds - 1})")
        pid = self.stop("osd", osd, sig=sig)
        if not pid:
            raise CephError(f"osd.{osd} is not running")
        return f"osd.{osd}: stopped (pid {pid}, {signal.Signals(sig).name})"

    def start_osd(self, osd: int) -> str:
        if osd not in self.layout.osd_ids:
            raise CephError(f"no OSD {osd} in this lab (0-{self.layout.osds - 1})")
        return f"osd.{osd}: {'started' if self.start('osd', osd) else 'already running'}"

    def rss_kib(self) -> dict[str, int]:
        """Resident memory of each of our daemons and clients (KiB, from /proc)."""
        pids = dict(self.running())
        for f in self.layout.run_dir.glob("client.*.pid"):
            node = f.name.removeprefix("client.").removesuffix(".pid")
            if (pid := self.client_pid(node)):
                pids[f"client.{node}"] = pid
        rss = {}
        for name, pid in pids.items():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        rss[name] = int(line.split()[1])
            except (OSError, ValueError, IndexError):
                continue
        return rss


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((ADDRESS, port))
        except OSError:
            return False
    return True
