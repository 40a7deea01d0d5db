"""A real distributed file system for the emulated cluster: a GlusterFS volume whose
bricks live under ``.state/gluster/``, served by a ``glusterd`` of our own, with one
FUSE client per emulated node (``scripts/local-cluster up --fs gluster``).

Each ``slurmd -N nX`` runs in a mount namespace of its own (``unshare -m``) where the
volume is mounted by a client process of its own, at the same path as on the login
node: a job step on nX reads and writes through nX's client and nX's page cache, as
on a real cluster.  The login node (this host's own namespace) has a client too: the
harness's guards and cleanup go through it.

Our glusterd has its own working directory, run directory and socket, listens on
``ADDRESS`` (a loopback address of its own: GlusterFS refuses bricks on 127.0.0.1 and
its brick daemons always call back on port 24007 of the brick host), and gives the
bricks ports from ``port_base + BRICK_PORTS``.  A glusterd we did not start is never
touched: if it holds the address we need, ``up`` refuses.

Standard library only, like :mod:`.cluster` (runs before any virtual environment).

Why ~620 lines in one module: it is one volume's life, and its parts share one state.
:class:`GlusterLayout` names every path, port and argument (the bricks, glusterd's own
directories and socket, each node's client); :class:`Gluster` brings them up in order
(glusterd, the bricks, the volume, the login node's client, one client per node's mount
namespace), breaks them for the fault tests (a client or a brick killed, a node cut off)
and restores, heals and stops them, each step checking the process it started by its
pid file.  Split, the steps would pass the same layout and pids around between modules;
:mod:`.cluster` calls only the steps (``up``, ``down``, a node's client, the faults).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

#: GlusterFS refuses loopback brick hosts named localhost/127.0.0.1; another
#: loopback address is accepted and keeps all traffic on this host.  A checkout whose
#: cluster runs on another port base gets another address and mount point (see
#: ``for_port_base``), so that two checkouts' volumes never meet.
ADDRESS = "127.0.0.2"
DEFAULT_PORT_BASE = 17000
#: The management port; brick daemons always fetch their volume file from it.
GLUSTERD_PORT = 24007
VOLUME = "fsaccept"
#: A test's fixture: ``off`` makes ``quota-set`` set a limit no test reaches (a volume
#: without quota enforcement where the reference promises one; its usage still counted).
QUOTA_FIXTURE = "FSACCEPT_LAB_QUOTA"
#: The limit ``quota-set`` sets under that fixture: accounting on, no limit reached.
UNREACHABLE_QUOTA = 1 << 50
#: The same path on every node and on the login node; reference/local-gluster.yaml pins it.
MOUNT_POINT = Path("/mnt/fsaccept-gluster")
#: Bricks listen on port_base + 200 ... port_base + 299.
BRICK_PORTS = (200, 299)
VOLUME_TYPES = ("distribute", "replica", "disperse")


#: The volume options that make the nodes' clients behave as one shared file system
#: (docs/user/semantics.md, what GlusterFS does): GlusterFS's defaults cache a file's
#: attributes and content for 1 s on each client (md-cache, quick-read), so another node
#: saw a closed file's new content ~1 s late; and open-behind opens a file only at its
#: first read, so a file unlinked on another node after the open read ENOENT.  With the
#: upcall cache invalidation on and open-behind off, both cases pass.
COHERENCE = (("features.cache-invalidation", "on"), ("performance.cache-invalidation", "on"),
             ("performance.quick-read-cache-invalidation", "on"),
             ("performance.open-behind", "off"))
#: The nodes' client mount options: the kernel keeps no attributes (FUSE's
#: attribute-timeout, 1 s by default), so another node's link count, size and mtime show
#: at once; the entry cache stays (entry-timeout=0 made a rename seen from another node
#: miss the name more often).  ``acl``: POSIX ACLs, as a site's contract promises them.
#: Without it the client refuses to set an ACL, and its kernel checks the mode bits only
#: (FUSE's default_permissions), so an ACL that grants more than the mode is refused.
CLIENT_OPTIONS = ("attribute-timeout=0", "acl")


class GlusterError(Exception):
    """A problem the user can act on; printed as one line, no traceback."""


@dataclass(frozen=True)
class GlusterLayout:
    state_dir: Path                 # .state/gluster
    port_base: int
    bricks: int = 4
    volume_type: str = "distribute"
    #: "" : ``fsaccept`` for a distributed volume, ``fsaccept-<type>`` for another type,
    #: ``...-<brick size>`` with small bricks (each its own volume and bricks: switching
    #: never reuses another's).
    volume: str = ""
    #: "" : bricks are directories on this host's disk; "256M": each brick is a loop-
    #: mounted ext4 image of that size under images/ (to fill one up: ENOSPC).
    brick_size: str = ""
    address: str = ADDRESS
    mount_point: Path = MOUNT_POINT
    #: Each node's client mount options (``local-cluster remount`` gives one node others).
    client_options: tuple[str, ...] = CLIENT_OPTIONS

    @classmethod
    def for_port_base(cls, state_dir: Path, port_base: int, **kw) -> "GlusterLayout":
        """The layout of a cluster on ``port_base``: the default one has the address
        and mount point reference/local-gluster.yaml pins; another port base its own."""
        if port_base != DEFAULT_PORT_BASE:
            kw.setdefault("address", f"127.0.{(port_base >> 8) & 255}.{(port_base & 255) or 1}")
            kw.setdefault("mount_point", Path(f"{MOUNT_POINT}-{port_base}"))
        return cls(state_dir, port_base, **kw)

    def __post_init__(self) -> None:
        if self.volume_type not in VOLUME_TYPES:
            raise GlusterError(f"unknown volume type {self.volume_type!r} "
                               f"(one of {', '.join(VOLUME_TYPES)})")
        if not 1 <= self.bricks <= 16:
            raise GlusterError(f"bricks must be between 1 and 16, got {self.bricks}")
        if self.volume_type != "distribute" and self.bricks < 2:
            raise GlusterError(f"a {self.volume_type} volume needs at least 2 bricks")
        if self.brick_size and not re.fullmatch(r"[1-9][0-9]*[MG]", self.brick_size):
            raise GlusterError(f"brick size {self.brick_size!r} is not a size like 256M or 1G")
        if self.brick_size and _bytes(self.brick_size) < 64 << 20:
            raise GlusterError(f"brick size {self.brick_size} is below 64M (ext4 and "
                               "GlusterFS need room of their own)")
        if not self.volume:
            object.__setattr__(self, "volume", "-".join([VOLUME, *self.kind]))

    @property
    def kind(self) -> list[str]:
        """What sets this volume apart from the default one (type, brick size)."""
        return [k for k in (self.volume_type if self.volume_type != "distribute" else "",
                            self.brick_size) if k]

    @property
    def source(self) -> str:
        """What findmnt shows as the SOURCE of a client mount."""
        return f"{self.address}:{self.volume}"

    @property
    def brick_dirs(self) -> list[Path]:
        top = self.state_dir / "bricks"
        if self.kind:
            top = top / "-".join(self.kind)
        return [top / f"b{i}" for i in range(1, self.bricks + 1)]

    @property
    def image_dir(self) -> Path:
        return self.state_dir / "images"

    def brick_image(self, brick: Path) -> Path:
        """The ext4 image mounted at ``brick`` (with ``brick_size``)."""
        return self.image_dir / f"{self.volume}-{brick.name}.img"

    @property
    def brick_ports(self) -> tuple[int, int]:
        """The first and last port glusterd gives the bricks."""
        return self.port_base + BRICK_PORTS[0], self.port_base + BRICK_PORTS[1]

    @property
    def run_dir(self) -> Path:
        return self.state_dir / "run"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "log"

    @property
    def socket_path(self) -> Path:
        return self.run_dir / "glusterd.socket"

    def client_pidfile(self, node: str) -> Path:
        """Pid file of the FUSE client of ``node`` ("login": this host's own)."""
        return self.run_dir / f"client-{node}.pid"

    def glusterd_vol(self) -> str:
        """glusterd's own volume file: every directory and port its own."""
        lo, hi = self.brick_ports
        return "\n".join([
            "volume management",
            "    type mgmt/glusterd",
            f"    option working-directory {self.state_dir / 'glusterd'}",
            f"    option run-directory {self.run_dir}",
            f"    option glusterd-sockfile {self.socket_path}",
            "    option transport-type socket",
            f"    option transport.socket.bind-address {self.address}",
            f"    option transport.socket.listen-port {GLUSTERD_PORT}",
            f"    option base-port {lo}",
            f"    option max-port {hi}",
            "    option ping-timeout 0",
            "    option event-threads 1",
            "end-volume", ""])

    def create_args(self) -> list[str]:
        """``gluster volume create`` arguments (bricks on local directories need force)."""
        shape = {"distribute": [], "replica": ["replica", str(self.bricks)],
                 "disperse": ["disperse", str(self.bricks)]}[self.volume_type]
        return ["volume", "create", self.volume, *shape,
                *[f"{self.address}:{b}" for b in self.brick_dirs], "force"]

    def client_argv(self, node: str, options: tuple[str, ...] = ()) -> list[str]:
        """The FUSE client's command line; ``options``: mount options as ``mount -o``
        takes them (``attribute-timeout=10``, ``acl``), given to it as ``--name[=value]``."""
        return ["glusterfs", f"--volfile-server={self.address}",
                f"--volfile-id={self.volume}",
                f"--pid-file={self.client_pidfile(node)}",
                f"--log-file={self.log_dir / f'client-{node}.log'}",
                *client_flags(options), str(self.mount_point)]

    def node_wrapper(self, node: str, mount: bool = True,
                     options: tuple[str, ...] | None = None) -> list[str]:
        """Prefix that runs a command (the node's slurmd) in a mount namespace of its
        own, where the volume is mounted by a client of its own (``mount=False``: a
        node that lost its client; the path is then the bare directory below;
        ``options``: its client's mount options, see :meth:`client_argv`; None: the
        lab's, ``client_options``)."""
        options = self.client_options if options is None else options
        mp = str(self.mount_point)
        script = ['umount -l "$1" 2>/dev/null']  # the login node's client, copied in
        if mount:
            # $7: the client's flags, split on spaces (client_flags allows no other
            # space, quote or wildcard in them).
            script += ['"$2" "$3" "$4" "$5" "$6" $7 "$1" || exit 97',
                       # The client forks and mounts in the background: wait for it.
                       'i=0; until [ "$(findmnt -n -o FSTYPE -M "$1")" = fuse.glusterfs ]; do '
                       'i=$((i+1)); [ $i -gt 200 ] && exit 98; sleep 0.05; done']
        script += ['shift 7', 'exec "$@"']
        # slave: mounts made on the host later (a test's loop mount) reach the node, as
        # a site's shared mounts reach its nodes; the node's own client stays its own.
        return ["unshare", "-m", "--propagation", "slave", "--", "sh", "-c",
                "; ".join(script), "fsaccept-node", mp, *self.client_argv(node)[:5],
                " ".join(client_flags(options))]


#: A client mount option as ``mount -o`` takes it: a name, and a plain value.
MOUNT_OPTION = re.compile(r"[a-z][a-z0-9-]*(=[A-Za-z0-9.]+)?")


def client_flags(options: tuple[str, ...]) -> list[str]:
    """``attribute-timeout=10`` -> ``--attribute-timeout=10``; anything else is refused."""
    bad = [o for o in options if not MOUNT_OPTION.fullmatch(o)]
    if bad:
        raise GlusterError(f"mount option {bad[0]!r} is not name or name=value "
                           "(letters, digits, '-', '.')")
    return [f"--{o}" for o in options]


def _bytes(size: str) -> int:
    return int(size[:-1]) << {"M": 20, "G": 30}[size[-1]]


def _pid_of(pidfile: Path, expected: str) -> int | None:
    """The pid in ``pidfile`` if that process is alive and is ``expected`` (never a
    recycled pid: processes are only ever stopped by their own pid files)."""
    try:
        pid = int(pidfile.read_text().split()[0])
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        return None
    return pid if os.path.basename(argv0) == expected and state != "Z" else None


def _ended(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie) within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.kill(pid, 0)
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (ProcessLookupError, OSError):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def _stop(pid: int, timeout: float = 10) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not _ended(pid, timeout):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _loop_file(device: str) -> Path | None:
    """The image file behind a loop device (None if it is not one)."""
    proc = subprocess.run(["losetup", "-n", "-O", "BACK-FILE", device],
                          capture_output=True, text=True, timeout=15)
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def mount_of(path: Path) -> tuple[str, str, str] | None:
    """(target, fstype, source) of the mount exactly at ``path``, or None."""
    proc = subprocess.run(["findmnt", "-n", "-M", str(path), "-o", "TARGET,FSTYPE,SOURCE"],
                          capture_output=True, text=True, timeout=15)
    fields = proc.stdout.split()
    return (fields[0], fields[1], fields[2]) if proc.returncode == 0 and len(fields) >= 3 \
        else None


def unreachable_bricks(mount_point: Path) -> list[str] | None:
    """The bricks the client mounted at ``mount_point`` is not connected to now, from
    its own state (``.meta``, as the jobs' probe in fsaccept.core.servers reads it);
    None when that cannot be read."""
    try:
        graph = [d for d in (mount_point / ".meta" / "graphs" / "active").iterdir()
                 if d.is_dir() and (d / "type").read_text().strip() == "protocol/client"]
        return [d.name for d in graph
                if "connected = 1" not in (d / "private").read_text().splitlines()]
    except OSError:
        return None


class Gluster:
    def __init__(self, layout: GlusterLayout, fuse_device: Path = Path("/dev/fuse")) -> None:
        self.layout = layout
        #: Whether the last ``up`` mounted the login node's client again.
        self.remounted = False
        #: The FUSE device the clients need (a test points it elsewhere).
        self.fuse_device = fuse_device

    # -- helpers -----------------------------------------------------------
    def cli(self, *args: str, check: bool = True, timeout: float = 120
            ) -> subprocess.CompletedProcess:
        argv = ["gluster", "--mode=script", f"--glusterd-sock={self.layout.socket_path}",
                f"--log-file={self.layout.log_dir / 'cli.log'}", *args]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise GlusterError(f"gluster {' '.join(args)} failed: "
                               f"{(proc.stderr or proc.stdout).strip()}")
        return proc

    def glusterd_pid(self) -> int | None:
        return _pid_of(self.layout.run_dir / "glusterd.pid", "glusterd")

    def brick_pids(self) -> dict[str, int]:
        """Brick directory name (b1...) -> pid of its glusterfsd."""
        pids = {}
        for f in (self.layout.run_dir / "vols" / self.layout.volume).glob("*.pid"):
            pid = _pid_of(f, "glusterfsd")
            if pid:
                pids[f.stem.rsplit("-", 1)[-1]] = pid
        return pids

    def self_heal_pids(self) -> dict[str, int]:
        """Volume -> pid of the self-heal daemon glusterd starts for a replicated (or
        dispersed) volume."""
        pids = {}
        for f in self.layout.run_dir.glob("shd/*/*.pid"):
            pid = _pid_of(f, "glusterfs")
            if pid:
                pids[f.parent.name] = pid
        return pids

    def client_pid(self, node: str) -> int | None:
        return _pid_of(self.layout.client_pidfile(node), "glusterfs")

    def _client_mounts(self, nodes: list[str]):
        """(node, mount point as that node's client sees it): the login node's, then each
        of ``nodes``' in its own mount namespace (a node without its client is left out)."""
        yield "login", self.layout.mount_point
        for node in nodes:
            pid = self.client_pid(node)
            if pid:
                yield node, Path(f"/proc/{pid}/root", *self.layout.mount_point.parts[1:])

    def wait_connected(self, nodes: list[str], timeout: float = 60) -> None:
        """Until every client (the login node's and each of ``nodes``', read in its own
        mount namespace) is connected to every brick: a revived brick is reconnected to
        within seconds, and a job's node check refuses a degraded volume."""
        def connected():
            return all(unreachable_bricks(mount) == [] for _, mount in
                       self._client_mounts(nodes))
        try:
            self._wait(connected, timeout, "the clients did not reach every brick")
        except GlusterError as err:
            said = {node: unreachable_bricks(mount) for node, mount in self._client_mounts(nodes)}
            raise GlusterError(f"{err}: {said}") from None

    def cut_off_clients(self, nodes: list[str]) -> list[str]:
        """Those of ``nodes`` whose client does not reach a brick although every brick
        daemon runs: a client that will not recover by itself (seen under load right
        after a down and up: its log says "Volume-ID different" for every reconnect)."""
        if len(self.brick_pids()) < self.layout.bricks:
            return []
        return [node for node, mount in self._client_mounts(nodes)
                if node != "login" and unreachable_bricks(mount) != []]

    # -- checks before anything starts ---------------------------------------
    def check_prerequisites(self) -> None:
        for tool, package in [("glusterd", "glusterfs-server"), ("gluster", "glusterfs-server"),
                              ("glusterfs", "glusterfs-client"), ("unshare", "util-linux")]:
            if shutil.which(tool) is None:
                raise GlusterError(f"{tool} not found (Debian package {package}): "
                                   "run scripts/setup")
        if not self.fuse_device.exists():
            raise GlusterError(f"{self.fuse_device} does not exist: GlusterFS clients need "
                               "FUSE (load the fuse module, or give the container /dev/fuse)")

    def check_address_free(self) -> None:
        """glusterd's address must be free: a glusterd we did not start is never used
        for our volume, nor stopped."""
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((self.layout.address, GLUSTERD_PORT))
            except OSError:
                raise GlusterError(
                    f"port {GLUSTERD_PORT} on {self.layout.address} is already in use (a "
                    "glusterd not started by fsaccept?): fsaccept never uses or stops "
                    "another glusterd; stop it yourself, or run the cluster without "
                    "--fs gluster") from None

    def check_bricks(self) -> None:
        """A brick directory holding another volume's data is refused: GlusterFS
        refuses to reuse it, and its data is not ours to delete."""
        ours = self.volume_id()
        for brick in self.layout.brick_dirs:
            try:
                raw = os.getxattr(brick, "trusted.glusterfs.volume-id")
            except OSError:
                continue  # no brick there yet (or a fresh directory)
            if ours is None or raw.hex() != ours.replace("-", ""):
                raise GlusterError(
                    f"{brick} already holds another GlusterFS volume's data (volume-id "
                    f"{raw.hex()}): fsaccept does not reuse or delete it; move it away")

    def check_volume_host(self) -> None:
        """A volume this state directory keeps with its bricks on another address (made
        on another port base: each has an address of its own) is refused, naming both:
        glusterd could never start its bricks here, and the volume is not deleted."""
        info = self.layout.state_dir / "glusterd" / "vols" / self.layout.volume / "info"
        try:
            lines = info.read_text(errors="replace").splitlines()
        except OSError:
            return  # no volume kept yet
        hosts = sorted({line.split("=", 1)[1].split(":", 1)[0] for line in lines
                        if re.match(r"brick-[0-9]+=[^:]+:", line)})
        other = [h for h in hosts if h != self.layout.address]
        if other:
            raise GlusterError(
                f"{info}: the volume {self.layout.volume} kept here has its bricks on "
                f"{', '.join(other)}, made on another port base; this cluster (port base "
                f"{self.layout.port_base}) serves {self.layout.address}: give this port "
                f"base a state directory of its own (FSACCEPT_STATE_DIR), or bring the "
                f"other cluster down and remove {self.layout.state_dir}; glusterd not started")

    def volume_id(self) -> str | None:
        info = self.layout.state_dir / "glusterd" / "vols" / self.layout.volume / "info"
        try:
            for line in info.read_text().splitlines():
                if line.startswith("volume-id="):
                    return line.split("=", 1)[1].strip()
        except OSError:
            pass
        return None

    # -- up / down -----------------------------------------------------------
    def up(self) -> str:
        layout = self.layout
        self.check_prerequisites()
        running = self.glusterd_pid()
        if not running:  # every check before anything is created or started
            self.check_volume_host()
            self.check_address_free()
            self.check_bricks()
        for d in (layout.run_dir, layout.log_dir, layout.state_dir / "glusterd",
                  *layout.brick_dirs):
            d.mkdir(parents=True, exist_ok=True)
        notes = []
        if layout.brick_size:
            self.mount_brick_images()
            notes.append(f"bricks of {layout.brick_size} each (ext4 images under "
                         f"{layout.image_dir})")
        if not running:
            vol = layout.state_dir / "glusterd.vol"
            vol.write_text(layout.glusterd_vol())
            subprocess.run(["glusterd", "-f", str(vol), "-p", str(layout.run_dir / "glusterd.pid"),
                            "-l", str(layout.log_dir / "glusterd.log")],
                           check=True, capture_output=True, timeout=60)
            self._wait(lambda: layout.socket_path.exists() and self.cli(
                "volume", "list", check=False, timeout=15).returncode == 0,
                30, "glusterd did not answer")
            notes.append(f"glusterd on {layout.address}:{GLUSTERD_PORT}")
        if self.volume_id() is None:
            self.check_bricks()
            self.cli(*layout.create_args())
            # O_DIRECT must reach the bricks: without it, write-behind acknowledges
            # "direct" writes from the client's memory (the jobs' probe would refuse them).
            self.cli("volume", "set", layout.volume, "performance.strict-o-direct", "on")
            notes.append(f"volume {layout.volume} ({layout.volume_type}, "
                         f"{layout.bricks} bricks under {layout.brick_dirs[0].parent})")
        for option, value in COHERENCE:  # each up: a volume made before has them too
            self.cli("volume", "set", layout.volume, option, value)
        if layout.volume_type != "distribute":
            # The self-heal daemon crawls its index on a brick's return and then every
            # heal-timeout (600 s by default): an entry left after the first crawl (a
            # file removed as the brick came back) would wait 10 minutes.
            self.cli("volume", "set", layout.volume, "cluster.heal-timeout", "5", check=False)
        for other in self.cli("volume", "list").stdout.split():
            if other != layout.volume:  # another type's volume, used before: not served
                self.cli("volume", "stop", other, check=False)
        status = self.cli("volume", "info", layout.volume).stdout
        deadline = time.monotonic() + 120
        while "Status: Started" not in status or len(self.brick_pids()) < layout.bricks:
            # force: also restarts a brick daemon that died (or a fault test killed).
            # Again until all run: glusterd takes a killed brick whose process has not
            # yet been reaped for a running one, and skips it.
            self.cli("volume", "start", layout.volume, "force")
            status = "Status: Started"
            try:
                self._wait(lambda: len(self.brick_pids()) == layout.bricks,
                           min(10, max(deadline - time.monotonic(), 0)),
                           "brick daemons did not start")
            except GlusterError:
                if time.monotonic() >= deadline:
                    raise
        self.share_root()
        self.remounted = self.mount_login()
        notes.append(f"mounted at {layout.mount_point} ({layout.source}), one client per node")
        return "gluster: " + "; ".join(notes)

    @staticmethod
    def share_root() -> None:
        """Make ``/`` a shared mount (systemd's default; some containers and VMs boot
        with it private), so that the nodes' namespaces (slaves of it) see what is
        mounted on this host after they started."""
        proc = subprocess.run(["findmnt", "-n", "-o", "PROPAGATION", "/"],
                              capture_output=True, text=True, timeout=15)
        if proc.stdout.split()[:1] == ["private"]:
            subprocess.run(["mount", "--make-shared", "/"], capture_output=True, timeout=15)

    def mount_brick_images(self) -> None:
        """Each brick on an ext4 image of its own (made once), loop-mounted at the brick
        directory: a brick then fills up at ``brick_size``."""
        self.layout.image_dir.mkdir(parents=True, exist_ok=True)
        for brick in self.layout.brick_dirs:
            found = mount_of(brick)
            if found:
                continue
            image = self.layout.brick_image(brick)
            if not image.exists():
                with open(image, "wb") as f:
                    f.truncate(_bytes(self.layout.brick_size))
                subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", str(image)], check=True,
                               capture_output=True, timeout=120)
            proc = subprocess.run(["mount", "-o", "loop", str(image), str(brick)],
                                  capture_output=True, text=True, timeout=60)
            if proc.returncode != 0:
                raise GlusterError(f"mounting {image} at {brick} failed: "
                                   f"{(proc.stderr or proc.stdout).strip()}")

    def remove_brick_images(self) -> list[str]:
        """Unmount and remove every brick image ``up`` made (with glusterd stopped), and
        the definition of each volume whose bricks they were (they are gone)."""
        removed = []
        for image in sorted(self.layout.image_dir.glob("*.img")):
            volume, brick = image.stem.rsplit("-", 1)
            mounted = self.layout.state_dir / "bricks" / volume.removeprefix(VOLUME + "-") / brick
            found = mount_of(mounted)
            # The loop device names its file by its real path (.state may be a link).
            if found and _loop_file(found[2]) == image.resolve():
                subprocess.run(["umount", "-d", str(mounted)], capture_output=True, timeout=60)
            if mount_of(mounted):
                continue  # still in use: left in place rather than pulled from under it
            image.unlink()
            shutil.rmtree(self.layout.state_dir / "glusterd" / "vols" / volume,
                          ignore_errors=True)
            removed.append(f"brick image {image.name}")
        return removed

    def mount_login(self) -> bool:
        """This host's own client at the mount point (the guards and cleanup use it);
        True if it was (re)mounted now: running nodes then see it over their own client,
        and must be restarted."""
        mp = self.layout.mount_point
        found = mount_of(mp)
        if found and found[1] == "fuse.glusterfs" and found[2] == self.layout.source \
                and self.client_pid("login"):
            return False
        if found:
            if found[1] == "fuse.glusterfs" and not self.client_pid("login"):
                subprocess.run(["umount", "-l", str(mp)], capture_output=True, timeout=30)
            else:
                raise GlusterError(f"{mp} is already a mount point ({found[1]} from "
                                   f"{found[2]}): fsaccept mounts its volume there")
        mp.mkdir(parents=True, exist_ok=True)
        # The nodes' mount options: a reference's mount_options judge the login node's
        # mount too (fsaccept.core.guards), before any job.
        proc = subprocess.run(self.layout.client_argv("login", self.layout.client_options),
                              capture_output=True,
                              text=True, timeout=60)
        if proc.returncode != 0:
            raise GlusterError(f"mounting {self.layout.source} at {mp} failed: "
                               f"{(proc.stderr or proc.stdout).strip()} (log "
                               f"{self.layout.log_dir / 'client-login.log'})")
        self._wait(lambda: (mount_of(mp) or ("", "", ""))[1] == "fuse.glusterfs", 30,
                   f"{mp} was not mounted")
        return True

    def stop_client(self, node: str) -> bool:
        pid = self.client_pid(node)
        if pid:
            _stop(pid)
        return bool(pid)

    def kill_client(self, node: str) -> str:
        """Kill a node's FUSE client the way a crash would (SIGKILL): its mount then
        answers "Transport endpoint is not connected"."""
        pid = self.client_pid(node)
        if not pid:
            raise GlusterError(f"no running GlusterFS client for node {node!r}")
        os.kill(pid, signal.SIGKILL)
        _ended(pid, 30)
        return f"node {node}: killed its GlusterFS client (pid {pid})"

    def kill_brick(self, brick: str) -> str:
        pids = self.brick_pids()
        if brick not in pids:
            raise GlusterError(f"no running brick daemon {brick!r} (running: "
                               f"{', '.join(sorted(pids)) or 'none'})")
        os.kill(pids[brick], signal.SIGKILL)
        _ended(pids[brick], 30)  # a fault, when this returns
        return f"brick {brick}: killed its glusterfsd (pid {pids[brick]})"

    def restore_bricks(self, timeout: float = 120) -> str:
        """Restart every brick daemon that is not running (``gluster volume start
        ... force``), as an administrator restores a failed server."""
        missing = self.layout.bricks - len(self.brick_pids())
        deadline = time.monotonic() + timeout
        while len(self.brick_pids()) < self.layout.bricks:
            if time.monotonic() > deadline:
                raise GlusterError(f"brick daemons did not restart within {timeout:.0f} s")
            self.cli("volume", "start", self.layout.volume, "force")
            time.sleep(1)
        return f"volume {self.layout.volume}: restarted {missing} brick daemon(s)"

    def heal_pending(self) -> dict[str, int | None]:
        """Brick -> entries still to heal (None when a brick cannot say: it is down).
        A distributed volume has nothing to heal.  ``heal VOL statistics heal-count``
        (glusterd asks the self-heal daemon): ``heal VOL info`` starts ``glfsheal``,
        which looks for glusterd on its default port, not on this cluster's."""
        if self.layout.volume_type == "distribute":
            return {}
        said = self.cli("volume", "heal", self.layout.volume, "statistics", "heal-count",
                        check=False, timeout=60).stdout
        pending: dict[str, int | None] = {}
        brick = ""
        for line in said.splitlines():
            if line.startswith("Brick "):
                brick = line.split(" ", 1)[1].strip()
                pending[brick] = None
            elif line.startswith("Number of entries:") and brick:
                value = line.split(":", 1)[1].strip()
                pending[brick] = int(value) if value.isdigit() else None
        return pending

    # -- quota (the lab's declaration of a site's quota commands: extras.quota) --------
    def quota_path(self, directory: str) -> str:
        """The volume's own path of ``directory`` below the mount point
        (``/fsaccept/...``), as ``gluster volume quota`` takes it."""
        path = Path(os.path.abspath(directory))
        try:
            rel = path.relative_to(self.layout.mount_point)
        except ValueError:
            raise GlusterError(f"{directory}: not below the volume's mount point "
                               f"{self.layout.mount_point}") from None
        return "/" + str(rel)

    def quota_set(self, directory: str, limit: int) -> str:
        """Quota on for the volume (if it was off), enforced at once (the soft and hard
        timeouts 0: every write checks the size), and ``limit`` bytes on ``directory``.
        With ``FSACCEPT_LAB_QUOTA=off`` (a test's fixture: a volume that counts usage
        but enforces no limit a user reaches) the limit set is 1 PiB, and it says so."""
        path = self.quota_path(directory)
        asked = limit
        if os.environ.get(QUOTA_FIXTURE) == "off":
            limit = UNREACHABLE_QUOTA
        proc = self.cli("volume", "quota", self.layout.volume, "enable", check=False)
        if proc.returncode != 0 and "already enabled" not in proc.stdout + proc.stderr:
            raise GlusterError(f"gluster volume quota enable failed: "
                               f"{(proc.stderr or proc.stdout).strip()}")
        if proc.returncode == 0:  # turned on here: clear turns it off, and nothing else
            self.quota_marker.write_text(path + "\n")
            for timeout in ("soft-timeout", "hard-timeout"):
                self.cli("volume", "quota", self.layout.volume, timeout, "0")
        self.cli("volume", "quota", self.layout.volume, "limit-usage", path, str(limit))
        return f"quota of {limit} bytes on {path} (volume {self.layout.volume})" + (
            f"; {QUOTA_FIXTURE}=off: {asked} bytes were asked" if limit != asked else "")

    @property
    def quota_marker(self) -> Path:
        """Says that ``quota_set`` turned the volume's quota on (it was off)."""
        return self.layout.state_dir / f"quota-enabled-{self.layout.volume}"

    def quota_clear(self, directory: str) -> str:
        """The limit on ``directory`` removed, and the volume's quota turned off again
        only if ``quota_set`` turned it on: a quota someone else set stays."""
        path = self.quota_path(directory)
        said = []
        steps = [("remove", path)] + ([("disable",)] if self.quota_marker.exists() else [])
        for args in steps:
            proc = self.cli("volume", "quota", self.layout.volume, *args, check=False)
            text = (proc.stderr or proc.stdout).strip()
            if proc.returncode != 0 and not any(
                    ok in text for ok in ("not enabled", "No such", "not set", "disabled")):
                raise GlusterError(f"gluster volume quota {' '.join(args)} failed: {text}")
            said.append(f"{args[0]}: {text.splitlines()[-1] if text else 'ok'}")
        self.quota_marker.unlink(missing_ok=True)
        return f"quota on {path}: " + "; ".join(said)

    def quota_usage(self, directory: str) -> int:
        """The bytes the volume's quota counts on ``directory``
        (``gluster volume quota VOL list PATH --xml``: ``used_space``)."""
        path = self.quota_path(directory)
        proc = self.cli("volume", "quota", self.layout.volume, "list", path, "--xml")
        found = re.search(r"<used_space>([0-9]+)</used_space>", proc.stdout)
        if not found:
            raise GlusterError(f"gluster volume quota list {path}: no used_space in its "
                               f"answer: {proc.stdout.strip()[:300]}")
        return int(found.group(1))

    def healed(self) -> tuple[bool, str]:
        """Whether every brick is up and reports no entry left to heal."""
        pending = self.heal_pending()
        if self.layout.volume_type != "distribute" and len(pending) < self.layout.bricks:
            return False, f"heal info names {len(pending)} of {self.layout.bricks} bricks"
        left = {b: n for b, n in pending.items() if n != 0}
        if left:
            return False, "not healed: " + ", ".join(
                f"{b} {'down' if n is None else f'{n} entries'}" for b, n in left.items())
        return True, f"volume {self.layout.volume}: healed ({len(pending)} bricks, 0 entries)"

    def down(self) -> list[str]:
        """Stop what ``up`` started, each by its own pid file, and nothing else."""
        stopped = []
        for f in sorted(self.layout.run_dir.glob("client-*.pid")):
            node = f.stem.removeprefix("client-")
            if node == "login":
                continue
            if self.stop_client(node):
                stopped.append(f"client {node}")
        mp = self.layout.mount_point
        found = mount_of(mp)
        if found and found[2].startswith(f"{self.layout.address}:"):  # any of our volumes
            subprocess.run(["umount", str(mp)], capture_output=True, timeout=60)
            if mount_of(mp):
                subprocess.run(["umount", "-l", str(mp)], capture_output=True, timeout=60)
        if self.stop_client("login"):
            stopped.append("client login")
        # Every volume's bricks (a volume of another type, used before, may run too).
        for f in sorted(self.layout.run_dir.glob("vols/*/*.pid")):
            pid = _pid_of(f, "glusterfsd")
            if pid:
                _stop(pid)
                stopped.append(f"brick {f.parent.name}/{f.stem.rsplit('-', 1)[-1]}")
        pid = self.glusterd_pid()
        if pid:
            _stop(pid)
            stopped.append("glusterd")
        for volume, pid in self.self_heal_pids().items():  # glusterd no longer restarts it
            _stop(pid)
            stopped.append(f"self-heal daemon {volume}")
        return stopped + self.remove_brick_images()

    @staticmethod
    def _wait(ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.2)
        raise GlusterError(f"{what} within {timeout:.0f} s")
