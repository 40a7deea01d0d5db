"""The CephFS lab of a test module: a cluster of its own (scripts/local-cluster up --fs
cephfs) on a port base and in a private state directory, brought down at the end.

Used by test_cephfs.py (port base + 2000) and test_cephfs_degraded.py (+ 2500): each
module's fixture is :func:`lab_fixture` with its own port base, so that the two never
meet, nor the cluster scripts/test runs (Slurm takes port base + 1..64, Ceph + 300..399).
Each runs without accounting (the squeue backend: quicker to start) and sees the Spack
build set-up made (each entry of ``.state/spack`` linked, only read, but its
``inputs.yaml``: scripts/setup then finds no Spack step to run and writes nothing there).
"""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from lab import ceph as cfs
from lab.cluster import DEFAULT_PORT_BASE, OPENMPI_ENV, ClusterLayout, ceph_layout
from tests.conftest import LOCAL_CLUSTER, REPO, reframe_command, require_lab_tools, run

SYSTEM = "local-cephfs"
CHECKS = ("ior_acceptance.py", "mdtest_metadata.py")
#: The variables that would have set-up build with Spack (into the linked build).
SPACK_VARIABLES = ("FSACCEPT_SPACK", "FSACCEPT_SPACK_PACKAGES", "FSACCEPT_SPACK_MIRROR",
                   "FSACCEPT_SPACK_SYSTEM")


def require_ceph_tools():
    """Ceph, Slurm and IOR installed (scripts/setup): else skip, or fail in CI."""
    require_lab_tools("ceph-mon", "ceph-fuse", "slurmd", "srun")


class Lab:
    """A module's cluster: its environment, layout and commands."""

    def __init__(self, state: Path, port_base: int):
        self.state = state
        self.port_base = port_base
        env = {k: v for k, v in os.environ.items()
               if k not in SPACK_VARIABLES + ("FSACCEPT_REFERENCE",)}
        self.env = dict(env, FSACCEPT_STATE_DIR=str(state),
                        FSACCEPT_PORT_BASE=str(port_base),
                        SLURM_CONF=str(state / "cluster" / "slurm.conf"),
                        CEPH_CONF=str(state / "ceph" / "ceph.conf"),
                        # ReFrame, the jobs' probes and the fault agent import this
                        # checkout's fsaccept.
                        PYTHONPATH=os.pathsep.join(
                            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
                        **OPENMPI_ENV)
        self.layout = ceph_layout(ClusterLayout(state / "cluster", port_base=port_base,
                                                fs="cephfs"))
        self.ceph = cfs.Ceph(self.layout)

    def cluster(self, *args, timeout=300, expect=0):
        proc = run([str(LOCAL_CLUSTER), *args, "--port-base", str(self.port_base)],
                   env=self.env, timeout=timeout)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        return proc

    def reference(self, directory: Path, edit=lambda data: None,
                  source: str = f"{SYSTEM}.yaml") -> Path:
        """``reference/<source>``, its target this cluster's mount point, changed by
        ``edit(data)``; written as ``directory/local-cephfs.yaml``."""
        data = yaml.safe_load((REPO / "reference" / source).read_text())
        mp = str(self.layout.mount_point)
        data["target"].update(path=mp, mount_point=mp)
        edit(data)
        path = directory / f"{SYSTEM}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def reframe_command(self, tmp_path, names, reference, checks=CHECKS, env=None):
        """(argv, environment, prefix) of a ReFrame run of ``names`` on local-cephfs."""
        prefix = tmp_path / "rfm"
        checks = [a for c in checks for a in ("-c", str(REPO / "checks" / c))]
        argv = reframe_command(*checks, "--system", SYSTEM, "-n",
                               f"^({'|'.join(names)})$", "-r", prefix=prefix)
        return argv, dict(env or self.env, FSACCEPT_REFERENCE=str(reference)), prefix

    def reframe(self, tmp_path, names, reference, checks=CHECKS):
        argv, env, prefix = self.reframe_command(tmp_path, names, reference, checks)
        proc = run(argv, env=env, timeout=1200)
        return proc, cases_of(prefix)

    def run_with_fault(self, tmp_path, inject, preload, reference,
                       names=("IORWriteBandwidth",), writers=4):
        """Run ``names``, IOR's writes held after each rank's first
        (tests/integration/src/ior_writes.c); once ``writers`` ranks have written,
        ``inject(data directory)``, then release the writes: every rank's next write
        meets the fault, whatever the machine's speed.  Returns (ReFrame's output,
        cases, the data directory, what inject returned)."""
        from tests.integration.test_gluster import wait_until_writing
        release = tmp_path / "release-writes"
        argv, env, prefix = self.reframe_command(
            tmp_path, list(names), reference,
            env=dict(self.env, LD_PRELOAD=str(preload),
                     FSACCEPT_TEST_HOLD_FILE=str(release)))
        earlier = frozenset((self.layout.mount_point / "fsaccept").glob(f"{names[0]}.*"))
        suite = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        try:
            data_dir = wait_until_writing(self.layout, names[0], suite, writers,
                                          earlier=earlier)
            injected = inject(data_dir)
            release.touch()
            output, _ = suite.communicate(timeout=900)  # within the job's time limit
        finally:
            release.touch()
            if suite.poll() is None:
                suite.terminate()
                try:
                    suite.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    suite.kill()
        return output, cases_of(prefix), data_dir, injected

    def healed(self) -> tuple[bool, str]:
        proc = run([str(LOCAL_CLUSTER), "healed", "--port-base", str(self.port_base)],
                   env=self.env, timeout=60)
        return proc.returncode == 0, (proc.stdout + proc.stderr).strip()

    #: While not healed, ``restore`` is asked again this often: a daemon that died after
    #: the first one (an OSD a loaded host's peers marked down, that then stopped) is
    #: started again, as an administrator would.
    RESTORE_AGAIN_S = 30

    def wait_healed(self, timeout=300):
        deadline = time.monotonic() + timeout
        asked, said = time.monotonic(), ""
        while time.monotonic() < deadline:
            done, said = self.healed()
            if done:
                return
            if time.monotonic() - asked >= self.RESTORE_AGAIN_S:
                print("not healed yet:", said[:500], "|", self.cluster("restore").stdout)
                asked = time.monotonic()
            time.sleep(2)
        pytest.fail(f"ceph not healed within {timeout} s: {said[:1000]}")


def cases_of(prefix: Path) -> dict:
    """{test name: case} of ReFrame's report under ``prefix``."""
    report = prefix / "report.json"
    cases = json.loads(report.read_text())["runs"][-1]["testcases"] \
        if report.exists() else []
    return {c["name"].split()[0]: c for c in cases}


def link_spack_build(state: Path) -> None:
    """``state/spack``: each entry of set-up's ``.state/spack`` linked but its
    ``inputs.yaml`` (set-up then has no Spack to run again, and writes nothing there)."""
    spack = REPO / ".state" / "spack"
    if not spack.is_dir():
        return
    (state / "spack").mkdir(parents=True)
    for entry in spack.iterdir():
        if entry.name not in ("inputs.yaml", ".lock"):
            (state / "spack" / entry.name).symlink_to(entry.resolve())


def lab_fixture(offset: int, name: str):
    """A module-scoped fixture ``lab``: a cluster of its own on the port base
    DEFAULT_PORT_BASE + ``offset``, state in a temporary directory ``name``, brought
    down at the end (its OSDs' files removed)."""

    @pytest.fixture(scope="module")
    def lab(tmp_path_factory):
        require_ceph_tools()
        state = tmp_path_factory.mktemp(name)
        link_spack_build(state)
        it = Lab(state, DEFAULT_PORT_BASE + offset)
        started = time.monotonic()
        try:
            it.cluster("up", "--fs", "cephfs", "--accounting", "none", timeout=600)
            print(f"up --fs cephfs: {time.monotonic() - started:.0f} s")
            yield it
        finally:
            run([str(LOCAL_CLUSTER), "down", "--port-base", str(it.port_base)],
                env=it.env, timeout=300)
            if not it.ceph.running():  # the OSDs' files, made by this module
                shutil.rmtree(state / "ceph", ignore_errors=True)

    return lab
